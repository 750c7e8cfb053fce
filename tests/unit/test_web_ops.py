"""Liveness, readiness, Prometheus metrics and the OpenAPI description checked against the real routes."""

from __future__ import annotations

import re

import pytest
from openapi_spec_validator import validate

from chops.db import make_engine
from chops.llm import ScriptedLLM, build_llm
from chops.settings import get_settings
from chops.web.app import create_app
from tests.unit.web_support import (SECRET, make_app, script_passed_write, script_profile_answer,
                                    script_queued_write, start)


@pytest.fixture
def web(sqlite_url):
    app, llm, engine = make_app(sqlite_url)
    return app.test_client(), llm, engine


def metric(text: str, name: str, **labels) -> float:
    """The value of one sample in a Prometheus text exposition (0 when absent)."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split(" ")[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_healthz_and_readyz(web):
    client, _, _ = web
    assert client.get("/healthz").get_json() == {"status": "ok"}
    resp = client.get("/readyz")
    assert resp.status_code == 200 and resp.get_json()["status"] == "ready"
    assert resp.get_json()["checks"]["database"] == {"ok": True}


def test_readyz_fails_when_the_database_is_down(tmp_path):
    engine = make_engine("mysql+pymysql://root@127.0.0.1:1/nothing")  # nothing listens on port 1
    app = create_app(get_settings(secret_key=SECRET), llm=ScriptedLLM(), engine=engine, index=None)
    resp = app.test_client().get("/readyz")
    assert resp.status_code == 503 and resp.get_json()["checks"]["database"]["ok"] is False


def test_readyz_fails_when_the_local_model_file_is_missing(sqlite_url, tmp_path):
    settings = get_settings(secret_key=SECRET, local_model_path=tmp_path / "missing.gguf")
    app = create_app(settings, llm=build_llm(settings), engine=make_engine(sqlite_url), index=None)
    body = app.test_client().get("/readyz").get_json()
    assert body["status"] == "not_ready" and body["checks"]["database"]["ok"] is True
    assert body["checks"]["model"]["roles"]["executor"] == {
        "ok": False, "provider": "local", "detail": f"model file {tmp_path / 'missing.gguf'} missing"}


def test_metrics_count_requests_turns_model_calls_verdicts_and_writes(web):
    client, llm, _ = web
    cid, auth = start(client)
    script_profile_answer(llm)
    client.post(f"/v1/conversations/{cid}/messages", json={"text": "role?"}, headers=auth)
    script_passed_write(llm, 40)
    client.post(f"/v1/conversations/{cid}/messages", json={"text": "Set my upload limit to 40"}, headers=auth)
    script_queued_write(llm, 41)
    client.post(f"/v1/conversations/{cid}/messages", json={"text": "Set my upload limit to 41"}, headers=auth)
    client.post(f"/v1/conversations/{cid}/messages", json={"text": ""}, headers=auth)
    text = client.get("/metrics").get_data(as_text=True)
    route = "/v1/conversations/<conversation_id>/messages"
    assert metric(text, "chops_http_requests_total", route=route, status="200") == 3
    assert metric(text, "chops_http_requests_total", route=route, status="400") == 1
    assert metric(text, "chops_http_request_seconds_count", route=route) == 4
    assert cid not in text  # ids never become labels
    assert metric(text, "chops_turns_total", route="basic_info", outcome="none") == 1
    assert metric(text, "chops_llm_calls_total", role="verifier") == 1 + 1 + 5
    assert metric(text, "chops_llm_calls_total", role="chooser") == 1
    assert metric(text, "chops_llm_chars_total", role="executor", direction="in") > 0
    assert metric(text, "chops_verifier_total", result="pass") == 2
    assert metric(text, "chops_verifier_total", result="fail") == 5
    assert metric(text, "chops_writes_total", state="committed") == 1
    assert metric(text, "chops_writes_total", state="queued") == 1
    assert "chops_llm_cost_usd_total" in text


def _rule_to_openapi(rule: str) -> str:
    return re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule)


def test_openapi_is_valid_and_matches_the_real_json_routes(web):
    client, _, _ = web
    spec = client.get("/openapi.json").get_json()
    validate(spec)
    real: dict[str, set[str]] = {}
    for rule in client.application.url_map.iter_rules():
        if rule.endpoint.split(".")[0] in ("chat", "live", "staff_api", "ops", "guides", "ratings", "analytics"):
            real.setdefault(_rule_to_openapi(rule.rule), set()).update(
                m.lower() for m in rule.methods - {"HEAD", "OPTIONS"})
    documented = {path: set(ops) for path, ops in spec["paths"].items()}
    assert documented == real
    limit = spec["paths"]["/v1/conversations/{conversation_id}/messages"]["post"]["description"]
    assert "at most 2000 characters" in limit


def test_the_documented_error_codes_are_the_ones_returned(web):
    client, _, _ = web
    spec = client.get("/openapi.json").get_json()
    post = spec["paths"]["/v1/conversations/{conversation_id}/messages"]["post"]["responses"]
    _, auth = start(client)
    resp = client.post("/v1/conversations/nope/messages", json={"text": "hi"}, headers=auth)
    assert resp.get_json()["error"]["code"] in post[str(resp.status_code)]["description"]
    error_schema = spec["components"]["schemas"]["ErrorBody"]
    assert error_schema["required"] == ["error"]


def test_readyz_waits_for_the_model_warm_up_and_reports_its_failure(sqlite_url):
    import threading

    release = threading.Event()

    class SlowWarmLLM(ScriptedLLM):
        warmable = True

        def __init__(self, fail: bool = False):
            super().__init__()
            self.fail = fail

        def warm(self, role: str, system: str) -> bool:
            release.wait(5)
            if self.fail:
                from chops.llm import LLMError

                raise LLMError("not_installed", "no engine")
            return True

    app = create_app(get_settings(secret_key=SECRET), llm=SlowWarmLLM(), engine=make_engine(sqlite_url), index=None)
    client = app.test_client()
    body = client.get("/readyz").get_json()
    assert body["status"] == "not_ready" and body["checks"]["warmup"] == {"ok": False, "detail": "warming up the model"}
    assert client.get("/healthz").status_code == 200  # alive while warming
    release.set()
    svc = app.extensions["chops"]
    assert svc.warm.done.wait(5)
    body = client.get("/readyz").get_json()
    assert body["status"] == "ready" and body["checks"]["warmup"]["ok"] is True
    assert body["checks"]["warmup"]["detail"] == f"{len(svc.agent.static_heads())} prompt heads cached"
    failing = create_app(get_settings(secret_key=SECRET), llm=SlowWarmLLM(fail=True),
                         engine=make_engine(sqlite_url), index=None)
    assert failing.extensions["chops"].warm.done.wait(5)
    body = failing.test_client().get("/readyz").get_json()
    assert body["status"] == "not_ready" and "no engine" in body["checks"]["warmup"]["detail"]
