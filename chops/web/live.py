"""``GET /v1/conversations/<id>/events``: the conversation's event log as Server-Sent Events.

Each event is ``id: <log id>``, ``event: turn|user|staff|state`` and ``data:`` its JSON
(``chops.web.desk_views.event_payload``). Without ``Last-Event-ID`` the stream starts at the
conversation's first event; with it, right after that event (the standard reconnect header, which
the widget sends itself), so a reconnecting client misses nothing and sees nothing twice.

Events are read from the database, so every worker serves every conversation; this process's
``EventHub`` only says when to read again (at once for events written here, within
``CHOPS_EVENT_POLL_S`` for events written by another worker). A stream holds one server thread:
it sends a comment every ``HEARTBEAT_S`` and ends after ``CHOPS_EVENT_STREAM_S`` (the client then
reconnects with ``Last-Event-ID``), so idle widgets cannot pin a worker's threads forever.
"""

from __future__ import annotations

import json
import time

from flask import Blueprint, Response, request, stream_with_context

from chops.desk.log import events_after
from chops.web.chat import allow_cross_origin, authorized_conversation, turn_payload
from chops.web.desk_views import event_payload
from chops.web.errors import ApiError
from chops.web.services import services

bp = Blueprint("live", __name__, url_prefix="/v1")
bp.after_request(allow_cross_origin)

HEARTBEAT_S = 15.0
BATCH = 200
RECONNECT_MS = 1000  # the "retry:" hint for EventSource-style clients


def _last_event_id() -> int:
    raw = request.headers.get("Last-Event-ID", "").strip()
    if not raw:
        return 0
    if not raw.isdigit() or len(raw) > 19:
        raise ApiError(400, "invalid_field", "Last-Event-ID must be an event id", field="Last-Event-ID")
    return int(raw)


@bp.get("/conversations/<conversation_id>/events")
def conversation_events(conversation_id: str):
    """The conversation's new events as Server-Sent Events (see the module docstring)."""
    svc = services()
    authorized_conversation(svc, conversation_id)
    after = _last_event_id()
    engine, hub, store = svc.engine, svc.hub, svc.store
    lifetime = svc.settings.event_stream_s

    def generate():
        nonlocal after
        deadline = time.monotonic() + lifetime
        yield f"retry: {RECONNECT_MS}\n: stream open\n\n"
        while True:
            events = events_after(engine, conversation_id, after, BATCH)
            turns = ({t.id: turn_payload(t) for t in store.history(conversation_id)}
                     if any(e.kind == "turn" for e in events) else {})
            for event in events:
                payload = event_payload(event, turns.get(event.turn_id))
                yield f"id: {event.id}\nevent: {event.kind}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n"
                after = event.id
            if len(events) == BATCH:
                continue  # more are waiting: send them before sleeping
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if not hub.wait(conversation_id, after, min(left, HEARTBEAT_S)):
                yield ": keep-alive\n\n"

    return Response(stream_with_context(generate()), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
