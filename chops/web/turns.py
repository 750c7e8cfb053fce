"""Running one message's turn for the chat API: its place in the model's queue, the turn itself (JSON or
Server-Sent Events), and the answer to a message resent under an ``Idempotency-Key`` it was answered with."""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from typing import Any

import sqlalchemy as sa
from flask import Response, jsonify, request, stream_with_context

from chops.admission import Busy, Ticket, busy_notice, queue_notice
from chops.i18n import reply_language
from chops.llm import LLMError
from chops.pipeline.replies import error_reply
from chops.web.desk_views import iso
from chops.web.errors import ApiError, database_unavailable, retry_later
from chops.web.services import Services

log = logging.getLogger(__name__)

# Progress event fields safe to show the end user (the rest of the trace is for staff).
_PUBLIC_EVENT_FIELDS = ("iteration", "route", "operation", "passed", "queued", "committed", "ahead", "wait_s",
                        "message")
IDEMPOTENCY_KEY_MAX = 128


def field(obj: Any, name: str, default: Any = None) -> Any:
    """A field of a store row, whether the store returns mappings or objects."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def turn_payload(turn: Any, *, turn_id: int | None = None, seq: int | None = None) -> dict:
    """What the user sees of one turn (a ``TurnResult`` or a stored ``TurnRecord``)."""
    return {
        "turn_id": turn_id if turn_id is not None else field(turn, "id"),
        "seq": seq if seq is not None else field(turn, "seq"),
        "created_at": iso(field(turn, "created_at")),
        "user_text": field(turn, "user_text"),
        "reply": field(turn, "reply"),
        "route": field(turn, "route"),
        "operation": field(turn, "operation"),
        "args": field(turn, "args"),
        "outcome": field(turn, "outcome"),
        "committed": bool(field(turn, "committed", False)),
        "queued": bool(field(turn, "queued", False)),
        "approval_id": field(turn, "approval_id"),
        "pending": field(turn, "pending") or (field(turn, "trace") or {}).get("pending"),
        "error": field(turn, "error"),
    }


def wants_stream() -> bool:
    if request.args.get("stream") in ("1", "true"):
        return True
    return request.accept_mimetypes.best_match(["application/json", "text/event-stream"]) == "text/event-stream"


def admit(svc: Services, conversation_id: str, text: str) -> Ticket | None:
    """The message's place in the model's queue (None: admission control is off), or ``429 busy`` with
    ``Retry-After`` when the expected wait is over the limit (nothing stored, no model call)."""
    if svc.admission is None:
        return None
    try:
        return svc.admission.enter(conversation_id)
    except Busy as exc:
        svc.metrics.observe_refusal("busy")
        raise retry_later("busy", busy_notice(reply_language([text]), exc.retry_after_s), exc.retry_after_s) from None


def run_turn(svc: Services, conversation_id: str, nickname: str, text: str, on_event=None, *,
             ticket: Ticket | None = None, client_key: str | None = None) -> dict:
    """Answer one message as ``nickname`` through the conversation service; the user's view of the turn.

    With a ``ticket`` the turn first waits for its place in the model's queue (``on_event("queued",
    {"ahead", "wait_s", "message"})`` whenever the place changes) and gives the place up however it ends.
    A model outage is a 503 ``model_unavailable`` with nothing stored; a database outage propagates to
    the app's handler (503 ``database_unavailable``).
    """
    if ticket is None:
        return _run_admitted(svc, conversation_id, nickname, text, on_event, client_key)
    lang = reply_language([text])

    def waiting(ahead: int, wait_s: float) -> None:
        if on_event is not None:
            on_event("queued", {"ahead": ahead, "wait_s": round(wait_s), "message": queue_notice(lang, ahead, wait_s)})

    try:
        svc.admission.wait(ticket, waiting)
        return _run_admitted(svc, conversation_id, nickname, text, on_event, client_key)
    finally:
        svc.admission.leave(ticket)


def _run_admitted(svc: Services, conversation_id: str, nickname: str, text: str, on_event,
                  client_key: str | None) -> dict:
    t0 = time.perf_counter()
    try:
        turn = svc.conversations.run_turn(conversation_id, nickname, text, on_event, client_key=client_key)
    except LLMError as exc:
        # The message is shown to the user (the widget prints it), so it is in their language.
        raise ApiError(503, "model_unavailable", error_reply(reply_language([text])), cause=exc.code) from None
    svc.metrics.observe_turn(turn.result, time.perf_counter() - t0)
    payload = turn_payload(turn.result, turn_id=turn.turn_id, seq=turn.seq)
    payload["user_text"] = text
    return payload


def _sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def stream_turn(svc: Services, lock: threading.Lock, conversation_id: str, nickname: str, text: str,
                 ticket: Ticket | None, client_key: str | None):
    """Run the turn in a worker thread and relay its events as Server-Sent Events: ``progress`` per
    pipeline step, ``delta`` {"text"} per streamed piece of the answer, then ``answer`` or ``error``."""
    events: queue.Queue = queue.Queue()

    def on_event(name: str, payload: dict) -> None:
        if name == "delta":  # a piece of the answer the model is writing (a draft until the answer event)
            piece = {"text": payload.get("text", "")}
            if payload.get("iteration") is not None:  # a retried attempt's draft starts afresh in the widget
                piece["iteration"] = payload["iteration"]
            events.put(("delta", piece))
            return
        public = {k: payload[k] for k in _PUBLIC_EVENT_FIELDS if k in payload}
        events.put(("progress", {"step": name, **public}))

    def work() -> None:
        try:
            events.put(("answer", run_turn(svc, conversation_id, nickname, text, on_event, ticket=ticket,
                                           client_key=client_key)))
        except ApiError as exc:
            events.put(("error", exc.body()))
        except sa.exc.DBAPIError as exc:
            err = database_unavailable(exc)
            if err is None:
                log.exception("streamed turn failed in conversation %s", conversation_id)
                err = ApiError(500, "internal_error", "internal error")
            events.put(("error", err.body()))
        except Exception:  # noqa: BLE001 - reported to the client as an error event, logged here
            log.exception("streamed turn failed in conversation %s", conversation_id)
            events.put(("error", {"error": {"code": "internal_error", "message": "internal error"}}))
        finally:
            lock.release()
            events.put(None)

    # The worker finishes (and stores the turn) even if the client goes away mid-stream.
    threading.Thread(target=work, name=f"turn-{conversation_id[:8]}", daemon=True).start()

    def generate():
        yield ": stream open\n\n"  # flushes headers at once so the widget can show progress
        while (item := events.get()) is not None:
            yield _sse(*item)

    return _event_stream(generate())


def _event_stream(chunks) -> Response:
    return Response(stream_with_context(chunks), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def client_key() -> str | None:
    """The message's ``Idempotency-Key`` header (the widget sends one per message and the same on a
    resend), or None; 400 ``invalid_field`` when it is longer than ``IDEMPOTENCY_KEY_MAX``."""
    key = request.headers.get("Idempotency-Key", "").strip()
    if len(key) > IDEMPOTENCY_KEY_MAX:
        raise ApiError(400, "invalid_field", f"Idempotency-Key holds at most {IDEMPOTENCY_KEY_MAX} characters",
                       field="Idempotency-Key")
    return key or None


def replayed(turn) -> Response:
    """The stored answer to a resent message, as JSON or as a one-event stream (as it was asked)."""
    payload = {**turn_payload(turn), "replayed": True}
    if wants_stream():
        return _event_stream(iter([_sse("answer", payload)]))
    return jsonify(payload)
