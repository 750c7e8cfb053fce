"""Guide retrieval: PDF ingestion, two chunk sizes, sentence embeddings, a FAISS index.

Public API: ``Chunk``, ``GuideIndex`` (``load_or_build``, ``search``), ``GuideError``;
embedders in ``chops.retrieval.embedders`` (``make_embedder``).
"""

from chops.retrieval.index import GuideIndex, index_dir_for
from chops.retrieval.ingest import Chunk, GuideError, Skipped

__all__ = ["Chunk", "GuideError", "GuideIndex", "Skipped", "index_dir_for"]
