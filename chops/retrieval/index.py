"""The guide index: one exact FAISS inner-product index per chunk size, plus BM25 over the
same chunks, saved with a manifest under ``data_dir/indexes/<hash of the guide dir>``.

The manifest records the guide directory, the embedder name, both chunk sizes, the chunking
rules' version and the sha256 of every PDF. Loading compares it with the current state; any difference (a guide edited,
added or removed, another embedder, other sizes, a copied foreign index, a damaged file)
rebuilds instead of answering from stale vectors.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np

from chops.retrieval.embedders import Embedder, make_embedder
from chops.retrieval.ingest import CHUNKER_VERSION, Chunk, Skipped, chunk_pages, guide_files, load_guides
from chops.settings import Settings

log = logging.getLogger(__name__)

Size = Literal["short", "long"]
Mode = Literal["dense", "fused"]
SIZES: tuple[Size, ...] = ("short", "long")
MANIFEST_FORMAT = 1
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
    """Where the index of ``guides_dir`` lives: one directory per (resolved) guide path."""
    key = hashlib.sha256(str(Path(guides_dir).resolve()).encode()).hexdigest()[:16]
    return settings.data_dir / "indexes" / key


def expected_manifest(guides_dir: Path, settings: Settings, embedder: Embedder) -> dict:
    """The manifest an up-to-date index of ``guides_dir`` must carry (without build facts)."""
    return {
        "format": MANIFEST_FORMAT,
        "guides_dir": str(Path(guides_dir).resolve()),
        "embedder": embedder.name,
        "chunk_sizes": {"short": settings.chunk_short, "long": settings.chunk_long},
        "chunker": CHUNKER_VERSION,
        "files": {p.name: sha256_file(p) for p in guide_files(guides_dir)},
    }


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
    """Searchable guide chunks at two sizes. Build with ``load_or_build``."""

    def __init__(self, guides_dir: Path, embedder: Embedder, manifest: dict,
                 chunks: dict[str, list[Chunk]], vectors: dict[str, np.ndarray], mode: Mode = "dense",
                 rebuilt: bool = False):
        import faiss

        self.guides_dir = Path(guides_dir)
        self.embedder = embedder
        self.manifest = manifest
        self.chunks = chunks
        self.mode: Mode = mode
        self.rebuilt = rebuilt
        self._faiss = {}
        self._lexical = {}
        for size in SIZES:
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

    @property
    def skipped(self) -> list[Skipped]:
        """Guide files left out of the index, with the reason."""
        return [Skipped(**s) for s in self.manifest.get("skipped", [])]

    # ---------------------------------------------------------------- building / loading
    @classmethod
    def load_or_build(cls, guides_dir: Path, settings: Settings, embedder: Embedder | None = None, *,
                      force: bool = False, progress: Progress | None = None) -> GuideIndex:
        """The index of ``guides_dir``: loaded from the data directory when its manifest matches
        the guides, embedder and chunk sizes of now; otherwise (or with ``force``) rebuilt and saved."""
        guides_dir = Path(guides_dir)
        embedder = embedder or make_embedder(settings)
        expected = expected_manifest(guides_dir, settings, embedder)
        where = index_dir_for(guides_dir, settings)
        if not force:
            loaded = cls._load(where, expected, embedder, settings)
            if loaded is not None:
                return loaded
        return cls.build(guides_dir, settings, embedder, expected=expected, progress=progress)

    @classmethod
    def _load(cls, where: Path, expected: dict, embedder: Embedder, settings: Settings) -> GuideIndex | None:
        manifest_path = where / "manifest.json"
        if not manifest_path.is_file():
            return None
        try:
            manifest = json.loads(manifest_path.read_text())
            stale = [key for key, value in expected.items() if manifest.get(key) != value]
            if stale:
                log.info("guide index at %s is stale (%s differ); rebuilding", where, ", ".join(stale))
                return None
            chunks, vectors = {}, {}
            for size in SIZES:
                chunks[size] = [Chunk(**c) for c in json.loads((where / f"{size}.chunks.json").read_text())]
                vectors[size] = np.load(where / f"{size}.vectors.npy")
                if vectors[size].shape[0] != len(chunks[size]):
                    raise ValueError(f"{size}: {vectors[size].shape[0]} vectors for {len(chunks[size])} chunks")
        except (OSError, ValueError, TypeError, KeyError) as exc:
            log.warning("guide index at %s is damaged (%s); rebuilding", where, exc)
            return None
        return cls(Path(expected["guides_dir"]), embedder, manifest, chunks, vectors, mode=settings.retrieval_mode)

    @classmethod
    def build(cls, guides_dir: Path, settings: Settings, embedder: Embedder | None = None, *,
              expected: dict | None = None, progress: Progress | None = None) -> GuideIndex:
        """Read, chunk and embed the guides now, and save the index with its manifest."""
        embedder = embedder or make_embedder(settings)
        expected = expected or expected_manifest(guides_dir, settings, embedder)
        started = time.perf_counter()
        pages, skipped = load_guides(guides_dir)
        sizes = {"short": settings.chunk_short, "long": settings.chunk_long}
        chunks = {size: chunk_pages(pages, sizes[size]) for size in SIZES}
        total = sum(len(c) for c in chunks.values())
        done, vectors = 0, {}
        for size in SIZES:
            parts = []
            texts = [c.text for c in chunks[size]]
            for start in range(0, len(texts), 16):  # batches of 16 only so the progress bar moves
                parts.append(embedder.embed(texts[start:start + 16]))
                done += len(parts[-1])
                if progress:
                    progress("embed", done, total)
            vectors[size] = np.concatenate(parts).astype(np.float32)
        manifest = {
            **expected,
            "skipped": [{"file": s.file, "reason": s.reason} for s in skipped],
            "pages": len(pages),
            "chunks": {size: len(chunks[size]) for size in SIZES},
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "build_seconds": round(time.perf_counter() - started, 3),
        }
        cls._save(index_dir_for(guides_dir, settings), manifest, chunks, vectors)
        return cls(Path(expected["guides_dir"]), embedder, manifest, chunks, vectors,
                   mode=settings.retrieval_mode, rebuilt=True)

    @staticmethod
    def _save(where: Path, manifest: dict, chunks: dict[str, list[Chunk]], vectors: dict[str, np.ndarray]) -> None:
        where.mkdir(parents=True, exist_ok=True)
        # The manifest goes first as removal and last as writing: a crash in between leaves
        # no manifest, which reads as "no index" and rebuilds, never as a half-written index.
        (where / "manifest.json").unlink(missing_ok=True)
        for size in SIZES:
            (where / f"{size}.chunks.json").write_text(json.dumps([c.to_dict() for c in chunks[size]], indent=0))
            np.save(where / f"{size}.vectors.npy", vectors[size])
        (where / "manifest.json").write_text(json.dumps(manifest, indent=2))

    # ---------------------------------------------------------------- searching
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
