"""OpenTelemetry: an answered turn becomes one trace with a span per pipeline step (SDK in-memory
exporter); with OTEL_EXPORTER_OTLP_ENDPOINT set the spans reach an OTLP/HTTP collector (a real HTTP
server on 127.0.0.1 decoding the protobuf); without it nothing of OpenTelemetry is even imported."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from chops.settings import get_settings
from chops.telemetry import TurnExporter, exporter_from_settings
from tests.unit.pipeline_support import member
from tests.unit.web_support import make_app, script_passed_write, start


@pytest.fixture
def traced_app(sqlite_url):
    app, llm, engine = make_app(sqlite_url)
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    app.extensions["chops"].metrics.turn_exporter = TurnExporter(provider)
    return app, llm, engine, memory


def test_a_committed_write_is_one_trace_with_a_span_per_step(traced_app):
    app, llm, engine, memory = traced_app
    script_passed_write(llm, 40)
    client = app.test_client()
    cid, auth = start(client)
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "set my upload limit to 40"},
                       headers=auth)
    assert resp.status_code == 200 and resp.get_json()["committed"] is True
    assert member(engine, "demo_leader")["limit"] == 40

    spans = memory.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1
    root = next(s for s in spans if s.name == "chops.turn")
    assert root.parent is None
    assert root.attributes["chops.route"] == "system" and root.attributes["chops.committed"] is True
    children = [s for s in spans if s is not root]
    assert all(s.parent.span_id == root.context.span_id for s in children)
    names = [s.name for s in children]
    for step in ("chops.classifier", "chops.executor", "chops.verifier", "chops.commit"):
        assert step in names
    verifier = next(s for s in children if s.name == "chops.verifier")
    assert verifier.attributes["gen_ai.request.model"] == "scripted"
    assert "gen_ai.usage.input_tokens" in verifier.attributes and "chops.latency_s" in verifier.attributes
    commit = next(s for s in children if s.name == "chops.commit")
    assert commit.attributes["chops.outcome"] == "ok" and commit.attributes["chops.committed"] is True
    # spans lie inside the turn, in pipeline order, and never carry the user's text
    assert all(root.start_time <= s.start_time <= s.end_time <= root.end_time for s in children)
    assert names.index("chops.classifier") < names.index("chops.verifier") < names.index("chops.commit")
    assert not any("upload limit to 40" in str(v) for s in spans for v in s.attributes.values())


def test_tier_and_demonstrations_become_attributes_when_a_step_has_them():
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))

    class Result:
        trace = {"route": "system", "steps": [{"role": "executor", "iteration": 1, "model": "m", "latency_s": 0.2,
                                               "tier": "small", "demonstrations": ["d-1", "d-7"]}]}
        committed, queued, iterations, latency_s, cost_usd = False, False, 1, 0.3, 0.0

    TurnExporter(provider).export(Result(), 0.3)
    executor = next(s for s in memory.get_finished_spans() if s.name == "chops.executor")
    assert executor.attributes["chops.tier"] == "small"
    assert tuple(executor.attributes["chops.demonstrations"]) == ("d-1", "d-7")


class _Collector(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP collector: decodes each POST /v1/traces body into the class-level list."""

    requests: list = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        body = self.rfile.read(int(self.headers["Content-Length"]))
        msg = ExportTraceServiceRequest()
        msg.ParseFromString(body)
        type(self).requests.append((self.path, msg))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_spans_reach_an_otlp_collector_when_the_endpoint_is_set(sqlite_url, monkeypatch):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Collector.requests = []
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
        exporter = exporter_from_settings(get_settings())
        assert exporter is not None
        app, llm, engine = make_app(sqlite_url)
        app.extensions["chops"].metrics.turn_exporter = exporter
        script_passed_write(llm, 30)
        client = app.test_client()
        cid, auth = start(client)
        assert client.post(f"/v1/conversations/{cid}/messages", json={"text": "limit 30 please"},
                           headers=auth).status_code == 200
        assert exporter.provider.force_flush(10_000)
    finally:
        server.shutdown()
    assert [path for path, _ in _Collector.requests] == ["/v1/traces"]
    (_, msg), = _Collector.requests
    resource = msg.resource_spans[0]
    service = {a.key: a.value.string_value for a in resource.resource.attributes}["service.name"]
    names = {s.name for scope in resource.scope_spans for s in scope.spans}
    assert service == "chops"
    assert {"chops.turn", "chops.classifier", "chops.executor", "chops.verifier", "chops.commit"} <= names


def test_without_an_endpoint_nothing_is_built_or_imported(tmp_path):
    code = (
        "import sys\n"
        "from chops.settings import get_settings\n"
        "from chops.telemetry import exporter_from_settings\n"
        "assert exporter_from_settings(get_settings()) is None\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], 'imported'\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
