"""The Flask app factory: wires settings, database, model, guide index, agent and blueprints.

Production: ``gunicorn -w 1 -k gthread --threads 16 -b 127.0.0.1:8000 'chops.web.app:create_app()'``
(settings from ``CHOPS_*`` variables). Nothing connects at import time; the factory builds the engine
(lazy: its first connection is the first request's), the LLM and the guide index, unless they are
injected (tests inject a scripted model). With the embedded model, the engine starts here (in the
main thread) and the prompt heads are cached in the background before ``/readyz`` says ready.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets

from flask import Flask

from chops.settings import Settings, get_settings
from chops.web.errors import register_error_handlers
from chops.web.metrics import Metrics, install_request_metrics
from chops.web.services import Services
from chops.web.warmup import Warmup

log = logging.getLogger(__name__)

BUILD = object()  # sentinel: "build it from the settings" (``index=None`` means: no guide index)


def _token_secret(settings: Settings) -> str:
    if settings.secret_key:
        return settings.secret_key
    if not settings.demo_mode:
        # No secret: no user can be authenticated; the chat API answers 503 not_configured.
        log.warning("CHOPS_SECRET_KEY is not set: signed tokens cannot be verified")
        return ""
    # Demo mode only: a per-process secret. Conversation tokens then survive only this process.
    log.warning("demo mode without CHOPS_SECRET_KEY: using a random per-process secret")
    return secrets.token_hex(32)


def _build_index(settings: Settings):
    from chops.retrieval import GuideIndex

    return GuideIndex.load_or_build(settings.guides_dir, settings)


def create_app(settings: Settings | None = None, *, llm=None, engine=None, index=BUILD) -> Flask:
    """Build the app. ``settings`` default to the environment; ``llm``, ``engine`` and ``index`` are
    built from the settings unless given (pass ``index=None`` to run without guide retrieval)."""
    from apis.db import make_engine
    from apis.service import Api
    from chops.conversation import ConversationService
    from chops.pipeline import Agent
    from chops.store import ConversationStore
    from chops.telemetry import exporter_from_settings

    settings = settings or get_settings()
    if engine is None:
        engine = make_engine(settings.resolved_database_url)
    if llm is None:
        from chops.llm import build_llm

        llm = build_llm(settings)
    if index is BUILD:
        index = _build_index(settings)
    api = Api(engine)
    store = ConversationStore(engine, api=api)
    secret = _token_secret(settings)
    agent = Agent(api, llm, settings, index, approvals=store)
    svc = Services(settings=settings, engine=engine, llm=llm, index=index, api=api, agent=agent, store=store,
                   conversations=ConversationService(store, agent),
                   metrics=Metrics(turn_exporter=exporter_from_settings(settings)), secret=secret)
    if settings.warm_on_start and getattr(llm, "warmable", False):
        svc.warm = Warmup(agent)

    app = Flask(__name__)
    # The console session key is derived from the token secret, so one leaked cookie key cannot
    # forge user tokens (and vice versa).
    session_key = hmac.new((secret or secrets.token_hex(32)).encode(), b"chops-console-session",
                           hashlib.sha256).hexdigest()
    app.config.update(
        SECRET_KEY=session_key,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        # A generous cap on the raw body; the documented per-message limit is max_message_chars.
        MAX_CONTENT_LENGTH=max(64 * 1024, settings.max_message_chars * 8 + 4096),
        JSON_SORT_KEYS=False,
    )
    app.extensions["chops"] = svc

    from chops.web import chat, console, ops, widget

    for blueprint in (chat.bp, console.bp, ops.bp, widget.bp):
        app.register_blueprint(blueprint)
    register_error_handlers(app)
    install_request_metrics(app, svc.metrics)
    return app
