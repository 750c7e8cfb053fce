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
from chops.web.limits import RateLimits
from chops.web.metrics import Metrics, install_request_metrics
from chops.web.security import install_security
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


def create_app(settings: Settings | None = None, *, llm=None, engine=None, index=BUILD, pack=None) -> Flask:
    """Build the app. ``settings`` default to the environment; ``llm``, ``engine``, ``index`` and the domain
    ``pack`` are built from the settings unless given (pass ``index=None`` to run without guide retrieval).
    The built index is the guide library in the data directory, which staff change through
    ``/v1/staff/guides``."""
    from chops.admission import Admission
    from chops.conversation import ConversationService
    from chops.db import make_engine
    from chops.desk import Desk, EventHub, Presence
    from chops.domain.pack import load_pack
    from chops.memory import build_memory
    from chops.bootstrap import build_agent
    from chops.retrieval import GuideLibrary
    from chops.store import ConversationStore
    from chops.telemetry import exporter_from_settings

    settings = settings or get_settings()
    if engine is None:
        engine = make_engine(settings.resolved_database_url)
    if llm is None:
        from chops.llm import build_llm

        llm = build_llm(settings)
    if index is BUILD:
        index = GuideLibrary.for_service(settings)
    pack = pack or load_pack(settings.domain)
    api = pack.api(engine)
    store = ConversationStore(engine, api=api)
    secret = _token_secret(settings)
    # The console lists and deletes remembered solutions whether or not the agent uses them now.
    memory = build_memory(settings, engine, index)
    agent = build_agent(settings, pack, api, llm, index, engine=engine, approvals=store,
                        memory=memory if settings.memory_enabled else None)
    hub = EventHub(engine, settings.event_poll_s)
    desk, presence = Desk(engine, on_event=hub.notify), Presence(engine, settings.staff_presence_s)
    svc = Services(settings=settings, engine=engine, llm=llm, index=index, api=api, agent=agent, store=store,
                   memory=memory, conversations=ConversationService(store, agent, desk=desk, presence=presence),
                   metrics=Metrics(turn_exporter=exporter_from_settings(settings)), secret=secret,
                   guides=index if isinstance(index, GuideLibrary) else None, desk=desk, hub=hub, presence=presence)
    if settings.admission_enabled:
        # A running ticket stops counting after this long: only a crashed worker's lives that long (a turn
        # takes seconds), and its place must come free without anyone cleaning up.
        budget = 2 * settings.roles.executor.timeout_s
        svc.admission = Admission(engine, capacity=settings.admission_capacity,
                                  max_wait_s=settings.admission_max_wait_s, turn_s=settings.admission_turn_s,
                                  turn_budget_s=budget)
    if settings.warm_on_start and getattr(llm, "warmable", False):
        svc.warm = Warmup(agent)

    app = Flask(__name__)
    # The console session key is derived from the token secret, so one leaked cookie key cannot
    # forge user tokens (and vice versa).
    session_key = hmac.new((secret or secrets.token_hex(32)).encode(), b"chops-console-session",
                           hashlib.sha256).hexdigest()
    app.config.update(
        SECRET_KEY=session_key,
        # A generous cap on the raw body; the documented per-message limit is max_message_chars.
        MAX_CONTENT_LENGTH=max(64 * 1024, settings.max_message_chars * 8 + 4096),
        JSON_SORT_KEYS=False,
    )
    app.extensions["chops"] = svc

    # These add their pages to console.bp when imported.
    from chops.web import (  # noqa: F401
        analytics,
        chat,
        console,
        console_desk,
        console_guides,
        console_operations,
        console_signin,
        guides,
        live,
        ops,
        staff_api,
        widget,
    )

    for blueprint in (chat.bp, live.bp, staff_api.bp, console.bp, console_desk.bp, guides.bp, ops.bp, widget.bp,
                      analytics.ratings_bp, analytics.bp, analytics.dashboard_bp):
        app.register_blueprint(blueprint)
    svc.limits = RateLimits(settings)
    install_security(app, settings)
    register_error_handlers(app)
    install_request_metrics(app, svc.metrics)
    analytics.register_outcome_gauges(svc.metrics.registry, engine, settings.abandon_after_s)
    return app
