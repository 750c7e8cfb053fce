"""Operations endpoints: liveness, readiness (database + model), Prometheus metrics, OpenAPI."""

from __future__ import annotations

import socket
import threading
import time
from urllib.parse import urlsplit

import sqlalchemy as sa
from flask import Blueprint, Response, jsonify

from chops.web.services import services
from chops.web.openapi import build_spec

bp = Blueprint("ops", __name__)

_MODEL_CHECK_TTL_S = 15.0  # a model check may open a socket; don't do it on every probe
_cache: dict[int, tuple[float, dict]] = {}
_cache_lock = threading.Lock()


@bp.get("/healthz")
def healthz():
    """The process is up and serving requests."""
    return jsonify(status="ok")


def _check_database(engine) -> dict:
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
        return {"ok": True}
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready", reported not raised
        return {"ok": False, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}


def _tcp_reachable(url: str | None) -> tuple[bool, str]:
    parts = urlsplit(url or "https://api.openai.com/v1")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=2):
            return True, f"{parts.hostname}:{port} reachable"
    except (OSError, RuntimeError) as exc:  # RuntimeError: the test suite's network guard
        return False, f"{parts.hostname}:{port} unreachable ({exc})"


def _check_provider(prov) -> tuple[bool, str]:
    """Whether one role's model can answer, without spending a model call on it."""
    if prov.name == "scripted":
        return True, "scripted"
    if prov.name == "local":
        path = prov.engine.config.path
        if not path.is_file():
            return False, f"model file {path} missing"
        return True, f"model {path.name} " + ("loaded" if prov.engine.started else "loads on first use")
    prov.endpoint()  # an OpenAI-compatible role without its API key raises LLMError("no_api_key") here
    return _tcp_reachable(getattr(prov.settings, "base_url", None) if hasattr(prov, "settings") else None)


def _check_model(llm) -> dict:
    key = id(llm)
    with _cache_lock:
        hit = _cache.get(key)
        if hit and time.monotonic() - hit[0] < _MODEL_CHECK_TTL_S:
            return hit[1]
    roles = {}
    for role, prov in getattr(llm, "providers", {}).items():
        try:
            ok, detail = _check_provider(prov)
        except Exception as exc:  # noqa: BLE001 - an unknown adapter shape is "not ready", not a 500
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        roles[role] = {"ok": ok, "provider": prov.name, "detail": detail}
    if not roles and getattr(llm, "script", None) is not None:  # ScriptedLLM answers every role
        roles["*"] = {"ok": True, "provider": "scripted", "detail": "scripted"}
    result = {"ok": bool(roles) and all(r["ok"] for r in roles.values()), "roles": roles}
    with _cache_lock:
        _cache[key] = (time.monotonic(), result)
    return result


@bp.get("/readyz")
def readyz():
    """200 when the database answers and every role's model is reachable, else 503 with details."""
    svc = services()
    checks = {"database": _check_database(svc.engine), "model": _check_model(svc.llm)}
    if svc.warm is not None:
        checks["warmup"] = svc.warm.status()
    ready = all(c["ok"] for c in checks.values())
    resp = jsonify(status="ready" if ready else "not_ready", checks=checks)
    resp.status_code = 200 if ready else 503
    return resp


@bp.get("/metrics")
def metrics():
    """Prometheus text exposition."""
    return Response(services().metrics.render(), mimetype="text/plain; version=0.0.4")


@bp.get("/openapi.json")
def openapi():
    """The OpenAPI description of the JSON API."""
    return jsonify(build_spec(services().settings.max_message_chars))
