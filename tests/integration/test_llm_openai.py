"""The OpenAI-compatible adapter against a real HTTP server in the test process (127.0.0.1 only)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

import pytest
from pydantic import BaseModel

from chops.llm import Ledger, LLMError, build_llm
from chops.settings import get_settings


class Proposal(BaseModel):
    operation: Literal["QueryLimit", "ModifyLimit"]
    limit: int | None = None


class FakeChatServer:
    """Speaks just enough chat-completions: each request pops the next scripted (status, content, delay)."""

    def __init__(self):
        self.requests: list[dict] = []
        self.replies: list[tuple[int, str, float]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, content, delay = outer.replies.pop(0)
                time.sleep(delay)
                if status != 200:
                    payload = {"error": {"message": content, "type": "server_error"}}
                else:
                    payload = {
                        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
                    }
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    srv = FakeChatServer()
    yield srv
    srv.close()


def make_llm(url: str, tmp_path, timeout_s: float = 5.0):
    role = {"provider": "openai", "model": "gpt-4-0125-preview", "base_url": url, "timeout_s": timeout_s,
            "api_key_env": "CHOPS_TEST_FAKE_KEY"}
    return build_llm(get_settings(data_dir=tmp_path, roles={"executor": role, "classifier": role}))


def test_structured_call_sends_json_schema_and_accounts_tokens_and_cost(server, tmp_path, monkeypatch):
    monkeypatch.setenv("CHOPS_TEST_FAKE_KEY", "sk-test")
    server.replies.append((200, '{"operation": "ModifyLimit", "limit": 40}', 0))
    llm = make_llm(server.url, tmp_path)
    ledger = Ledger()
    out = llm.structured("executor", [("system", "Pick."), ("user", "limit 40")], Proposal, ledger=ledger)
    assert out == Proposal(operation="ModifyLimit", limit=40)
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    assert req["body"]["messages"] == [{"role": "system", "content": "Pick."}, {"role": "user", "content": "limit 40"}]
    fmt = req["body"]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Proposal"
    assert fmt["json_schema"]["schema"]["properties"]["operation"]["enum"] == ["QueryLimit", "ModifyLimit"]
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    (rec,) = ledger.records
    assert (rec.provider, rec.model, rec.prompt_tokens, rec.completion_tokens) == ("openai", "gpt-4-0125-preview", 1000, 100)
    assert rec.cost_usd == pytest.approx((1000 * 10 + 100 * 30) / 1e6)  # the paper's GPT-4 prices
    assert rec.chars_in == len("Pick.") + len("limit 40") and rec.chars_out == len(server.requests and '{"operation": "ModifyLimit", "limit": 40}')


def test_text_call_and_invalid_structured_reply_is_retried(server, tmp_path):
    server.replies += [(200, "Hello!", 0), (200, '{"operation": "Drop"}', 0), (200, '{"operation": "QueryLimit"}', 0)]
    llm = make_llm(server.url, tmp_path)
    assert llm.text("classifier", [("user", "hi")]) == "Hello!"
    assert "response_format" not in server.requests[0]["body"]
    assert llm.structured("executor", [("user", "my limit?")], Proposal).operation == "QueryLimit"
    retry = server.requests[2]["body"]["messages"]
    assert retry[1] == {"role": "assistant", "content": '{"operation": "Drop"}'} and "operation" in retry[2]["content"]
    assert [r.retried for r in llm.ledger.records] == [False, True, True]


def test_http_500_is_server_error(server, tmp_path):
    server.replies.append((500, "boom", 0))
    llm = make_llm(server.url, tmp_path)
    with pytest.raises(LLMError) as err:
        llm.structured("executor", [("user", "x")], Proposal)
    assert err.value.code == "server_error" and "500" in str(err.value)
    assert llm.ledger.records[0].error == "server_error"


def test_slow_endpoint_is_timeout(server, tmp_path):
    server.replies.append((200, '{"operation": "QueryLimit"}', 2.0))
    llm = make_llm(server.url, tmp_path, timeout_s=0.3)
    t0 = time.perf_counter()
    with pytest.raises(LLMError) as err:
        llm.text("executor", [("user", "x")])
    assert err.value.code == "timeout"
    assert time.perf_counter() - t0 < 1.5  # no hidden client retries


def test_closed_port_is_unreachable(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = make_llm(f"http://127.0.0.1:{port}/v1", tmp_path)
    with pytest.raises(LLMError) as err:
        llm.text("executor", [("user", "x")])
    assert err.value.code == "unreachable"
