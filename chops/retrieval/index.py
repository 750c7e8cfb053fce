"""The searchable guide index of one version: an exact FAISS inner-product index per chunk size, plus
BM25 over the same chunks. Versions are built, stored and swapped by ``chops.retrieval.library``;
``GuideIndex.load_or_build`` keeps one library per guide folder in sync with the folder (the eval, the
benchmarks and ``--guides DIR``), under ``data_dir/indexes/<hash of the folder path>``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np

from chops.retrieval.embedders import Embedder
from chops.retrieval.ingest import Chunk, Skipped
from chops.retrieval.versions import SIZES
from chops.settings import Settings

Size = Literal["short", "long"]
Mode = Literal["dense", "fused"]
# The usual reciprocal-rank-fusion constant (Cormack et al. 2009): damps the head of each list.
RRF_K = 60
# Progress callback: (stage, done, total).
Progress = Callable[[str, int, int], None]


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def index_dir_for(guides_dir: Path, settings: Settings) -> Path:
    """Where the library of the folder ``guides_dir`` lives: one per (resolved) folder path."""
    key = hashlib.sha256(str(Path(guides_dir).resolve()).encode()).hexdigest()[:16]
    return settings.data_dir / "indexes" / key


class _Lexical:
    """BM25 over one chunk list (rebuilt on load: milliseconds for a guide set)."""

    def __init__(self, texts: list[str]):
        import bm25s

        import Stemmer  # PyStemmer: without stemming "adding students" never meets "add student"

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english").stemWords
        self._retriever = bm25s.BM25()
        self._retriever.index(self._tokenize(texts), show_progress=False)
        self._n = len(texts)

    def _tokenize(self, texts: list[str]):
        return self._bm25s.tokenize(texts, stopwords="en", stemmer=self._stemmer, return_ids=False,
                                    show_progress=False)

    def ranking(self, query: str) -> list[int]:
        """Chunk positions with a positive BM25 score, best first."""
        tokens = self._tokenize([query])
        if not tokens[0]:
            return []
        try:
            docs, scores = self._retriever.retrieve(tokens, k=self._n, show_progress=False)
        except (KeyError, ValueError):  # bm25s complains when no query word is in the vocabulary
            return []
        return [int(d) for d, s in zip(docs[0], scores[0]) if s > 0]


class GuideIndex:
    """Searchable guide chunks of one version at two sizes (immutable once built)."""

    def __init__(self, embedder: Embedder, manifest: dict, chunks: dict[str, list[Chunk]],
                 vectors: dict[str, np.ndarray], mode: Mode = "dense", rebuilt: bool = False):
        import faiss

        self.embedder = embedder
        self.manifest = manifest
        self.version: str | None = manifest.get("version")
        self.chunks = chunks
        self.mode: Mode = mode
        self.rebuilt = rebuilt
        self._faiss = {}
        self._lexical = {}
        for size in SIZES:
            if not chunks[size]:
                continue  # an empty version (every guide deleted): search finds nothing
            # Exact search: a guide set is hundreds of chunks, where approximate indexes buy nothing.
            index = faiss.IndexFlatIP(vectors[size].shape[1])
            index.add(vectors[size])
            self._faiss[size] = index
            self._lexical[size] = _Lexical([c.text for c in chunks[size]])
        # A turn searches the same question twice (short chunks for the classifier, long for the
        # executor); caching its vector halves the embedding work, which is most of a search.
        self.query_vector = lru_cache(maxsize=256)(self._embed_query)

    def _embed_query(self, query: str) -> np.ndarray:
        return self.embedder.embed([query])

    def current(self) -> GuideIndex:
        """This index: a fixed index is its own current version (as ``GuideLibrary.current``)."""
        return self

    @property
    def skipped(self) -> list[Skipped]:
        """Guide files left out of the index, with the reason."""
        return [Skipped(**s) for s in self.manifest.get("skipped", [])]

    @classmethod
    def load_or_build(cls, guides_dir: Path, settings: Settings, embedder: Embedder | None = None, *,
                      force: bool = False, progress: Progress | None = None) -> GuideIndex:
        """The index of the folder ``guides_dir``, brought in line with it first: only added or changed
        files are read and embedded; ``force`` embeds them all again. ``rebuilt`` says whether anything
        was. A missing folder or one without a readable guide file is a ``GuideError``."""
        from chops.retrieval.library import GuideLibrary

        library = GuideLibrary(index_dir_for(guides_dir, settings), settings, embedder)
        published = library.sync(guides_dir, force=force, progress=progress).published
        index = library.current()
        index.rebuilt = index.rebuilt or published
        return index

    def search(self, query: str, k: int = 3, size: Size = "long", mode: Mode | None = None) -> list[Chunk]:
        """The ``k`` best chunks of the given size for ``query``, best first. ``mode`` defaults to
        the index's mode: ``dense`` ranks by cosine; ``fused`` by reciprocal rank fusion of the
        cosine and BM25 rankings (``score`` is then the RRF score; ``cosine`` is always set)."""
        if size not in SIZES:
            raise ValueError(f"size must be one of {SIZES}, not {size!r}")
        mode = mode or self.mode
        pool = self.chunks[size]
        if not query.strip() or k <= 0 or not pool:
            return []
        qvec = self.query_vector(query)
        # The pool is small, so rank all of it: fusion then sees every candidate's dense rank.
        cosines, ids = self._faiss[size].search(qvec, len(pool))
        cosine_of = {int(i): float(s) for i, s in zip(ids[0], cosines[0]) if i >= 0}
        dense_rank = [int(i) for i in ids[0] if i >= 0]
        if mode == "dense":
            ranked = [(i, cosine_of[i]) for i in dense_rank[:k]]
        elif mode == "fused":
            fused: dict[int, float] = {}
            for ranking in (dense_rank, self._lexical[size].ranking(query)):
                for rank, i in enumerate(ranking, start=1):
                    fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank)
            # Ties (rare) fall back to the dense order, which is deterministic.
            ranked = sorted(fused.items(), key=lambda item: (-item[1], -cosine_of[item[0]]))[:k]
        else:
            raise ValueError(f"mode must be 'dense' or 'fused', not {mode!r}")
        return [Chunk(pool[i].file, pool[i].page, pool[i].text, score=round(score, 6),
                      cosine=round(cosine_of[i], 6)) for i, score in ranked]
