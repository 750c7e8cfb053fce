"""Guide retrieval: PDF, Markdown and HTML ingestion, two chunk sizes, sentence embeddings, a FAISS
index per version, and the versioned guide library.

Public API: ``Chunk``, ``GuideIndex`` (``load_or_build``, ``search``), ``GuideLibrary`` (``current``,
``apply``, ``sync``), ``GuideError``, ``DocumentError``; embedders in ``chops.retrieval.embedders``.
"""

from chops.retrieval.index import GuideIndex, index_dir_for
from chops.retrieval.ingest import Chunk, DocumentError, GuideError, Skipped
from chops.retrieval.library import GuideLibrary

__all__ = ["Chunk", "DocumentError", "GuideError", "GuideIndex", "GuideLibrary", "Skipped", "index_dir_for"]
