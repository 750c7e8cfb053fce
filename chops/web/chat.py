"""The widget's JSON API: start a conversation, send a message (JSON or Server-Sent Events), read history.

Authentication: ``POST /v1/conversations`` takes the user's token signed by the host site (or, in
demo mode only, a bare ``nickname``) and returns a *conversation token* — signed by this service,
bound to that conversation and user, expiring no later than the user's token. Every follow-up call
sends it as ``Authorization: Bearer <token>`` (the user's own token is accepted too). The acting
user is always the conversation's nickname: never the message body, never model output.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from typing import Any

import sqlalchemy as sa
from flask import Blueprint, Response, jsonify, request, stream_with_context

from chops.admission import Busy, Ticket, busy_notice, queue_notice
from chops.desk import DeskError
from chops.desk.log import MESSAGE_KINDS, recent_events
from chops.i18n import reply_language
from chops.llm import LLMError
from chops.pipeline.replies import error_reply
from chops.web.services import Services, services
from chops.web.desk_views import desk_error, event_payload, iso, state_payload
from chops.web.errors import ApiError, database_unavailable
from chops.web.schemas import NICKNAME_MAX, CreateConversation, PostMessage, parse_body
from chops.web.tokens import TokenError, checks_from, sign_token, verify_token

log = logging.getLogger(__name__)
bp = Blueprint("chat", __name__, url_prefix="/v1")

DEMO_TOKEN_TTL_S = 24 * 3600  # conversation tokens in demo mode (no user token to bound them)
# Progress event fields safe to show the end user (the rest of the trace is for staff).
_PUBLIC_EVENT_FIELDS = ("iteration", "route", "operation", "passed", "queued", "committed", "ahead", "wait_s",
                        "message")
IDEMPOTENCY_KEY_MAX = 128


@bp.after_request
def allow_cross_origin(response):
    """The widget runs on the host site's origin. Authorisation is the bearer token (no cookies), so
    allowing any origin exposes nothing a token holder could not already do."""
    response.headers["Access-Control-Allow-Origin"] = "*"
    response.headers["Access-Control-Allow-Headers"] = ("Content-Type, Authorization, Accept, Last-Event-ID, "
                                                        "Idempotency-Key")
    response.headers["Access-Control-Expose-Headers"] = "Retry-After"
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
    return response


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """A field of a store row, whether the store returns mappings or objects."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def json_body() -> Any:
    """The request's JSON object, or a 415/400 ``ApiError``."""
    if not request.is_json:
        raise ApiError(415, "unsupported_media_type", "send the body as application/json")
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise ApiError(400, "malformed_json", "the body must be a JSON object")
    return data


def _require_secret(svc: Services) -> str:
    if not svc.secret:
        raise ApiError(503, "not_configured", "the service has no CHOPS_SECRET_KEY to verify tokens with")
    return svc.secret


def _verify(token: str, svc: Services):
    try:
        claims = verify_token(token, _require_secret(svc), checks_from(svc.settings))
    except TokenError as exc:
        raise ApiError(503 if exc.code == "jwks_unavailable" else 401, exc.code, exc.message) from None
    if len(claims.nickname) > NICKNAME_MAX:
        raise ApiError(401, "token_invalid", f"the token's nickname is longer than {NICKNAME_MAX} characters")
    return claims


def authorized_conversation(svc: Services, conversation_id: str):
    """The conversation if the bearer token belongs to it: 401 without a valid token, 404 unknown id,
    403 when the token is for another user or another conversation."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "token_missing", "send the conversation token as 'Authorization: Bearer <token>'")
    claims = _verify(token.strip(), svc)
    conv = _conversation_row(svc, conversation_id)
    if conv is None:
        raise ApiError(404, "conversation_not_found", f"no conversation {conversation_id!r}")
    if claims.nickname != _get(conv, "nickname") or claims.conversation_id not in (None, conversation_id):
        raise ApiError(403, "forbidden", "this token does not grant access to that conversation")
    return conv


def _conversation_row(svc: Services, conversation_id: str) -> dict | None:
    """id, nickname, channel and times of one conversation: a primary-key lookup (the store's ``get``
    also counts the turns, which every message would pay for)."""
    from apis.tables import conversation

    if len(conversation_id) > 64:
        return None
    with svc.engine.connect() as conn:
        row = conn.execute(sa.select(conversation).where(conversation.c.id == conversation_id)).mappings().first()
    return dict(row) if row is not None else None


@bp.post("/conversations")
def create_conversation():
    """Start a conversation for the user in the signed token (or the demo nickname)."""
    svc = services()
    body = parse_body(CreateConversation, json_body())
    if body.token is not None:
        secret = _require_secret(svc)
        claims = _verify(body.token, svc)
        nickname, expires_at = claims.nickname, claims.expires_at
    elif body.nickname is not None:
        if not svc.settings.demo_mode:
            raise ApiError(403, "demo_mode_off", "an unsigned nickname is accepted only in demo mode; send a token")
        secret = _require_secret(svc)
        nickname, expires_at = body.nickname.strip(), int(time.time() + DEMO_TOKEN_TTL_S)
        if not nickname:
            raise ApiError(400, "invalid_field", "the field 'nickname' is empty", field="nickname")
    else:
        raise ApiError(400, "missing_field", "send 'token' (or 'nickname' in demo mode)", field="token")
    svc.limits.check_open_conversations(svc.engine, nickname)
    conversation_id = svc.store.create(nickname, "widget")
    token = sign_token(nickname, secret, expires_at - time.time(), conversation_id=conversation_id,
                       checks=checks_from(svc.settings))
    resp = jsonify(id=conversation_id, nickname=nickname, token=token, expires_at=expires_at)
    resp.status_code = 201
    return resp


def turn_payload(turn: Any, *, turn_id: int | None = None, seq: int | None = None) -> dict:
    """What the user sees of one turn (a ``TurnResult`` or a stored ``TurnRecord``)."""
    return {
        "turn_id": turn_id if turn_id is not None else _get(turn, "id"),
        "seq": seq if seq is not None else _get(turn, "seq"),
        "created_at": iso(_get(turn, "created_at")),
        "user_text": _get(turn, "user_text"),
        "reply": _get(turn, "reply"),
        "route": _get(turn, "route"),
        "operation": _get(turn, "operation"),
        "args": _get(turn, "args"),
        "outcome": _get(turn, "outcome"),
        "committed": bool(_get(turn, "committed", False)),
        "queued": bool(_get(turn, "queued", False)),
        "approval_id": _get(turn, "approval_id"),
        "error": _get(turn, "error"),
    }


@bp.get("/conversations/<conversation_id>")
def get_conversation(conversation_id: str):
    """The conversation's turns, oldest first (replies only; the traces are for staff), its state and
    the messages exchanged with staff."""
    svc = services()
    conv = authorized_conversation(svc, conversation_id)
    turns = [turn_payload(t) for t in svc.store.history(conversation_id)]
    messages = [event_payload(e) for e in recent_events(svc.engine, conversation_id, MESSAGE_KINDS, 500)]
    return jsonify(id=conversation_id, nickname=_get(conv, "nickname"), channel=_get(conv, "channel"),
                   created_at=iso(_get(conv, "created_at")), updated_at=iso(_get(conv, "updated_at")),
                   state=state_payload(svc.desk.state(conversation_id), svc.presence.anyone_active()),
                   turns=turns, messages=messages)


def _wants_stream() -> bool:
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
        raise ApiError(429, "busy", busy_notice(reply_language([text]), exc.retry_after_s),
                       headers={"Retry-After": str(exc.retry_after_s)}, retry_after=exc.retry_after_s) from None


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


def _stream_turn(svc: Services, lock: threading.Lock, conversation_id: str, nickname: str, text: str,
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


def _replayed(turn) -> Response:
    """The stored answer to a resent message, as JSON or as a one-event stream (as it was asked)."""
    payload = {**turn_payload(turn), "replayed": True}
    if _wants_stream():
        return _event_stream(iter([_sse("answer", payload)]))
    return jsonify(payload)


def message_text(svc: Services) -> str:
    """The ``text`` of a JSON message body: 413 ``message_too_long`` over the limit, 400 when blank."""
    body = parse_body(PostMessage, json_body())
    limit = svc.settings.max_message_chars
    if len(body.text) > limit:
        raise ApiError(413, "message_too_long", f"a message holds at most {limit} characters", limit=limit)
    if not body.text.strip():
        raise ApiError(400, "invalid_field", "the field 'text' is blank", field="text")
    return body.text


@bp.post("/conversations/<conversation_id>/messages")
def post_message(conversation_id: str):
    """Answer one message; JSON by default, Server-Sent Events with ``Accept: text/event-stream``."""
    svc = services()
    conv = authorized_conversation(svc, conversation_id)
    text = message_text(svc)
    nickname = _get(conv, "nickname")
    key = client_key()
    if key is not None and (done := svc.conversations.answered(conversation_id, key)) is not None:
        return _replayed(done)
    svc.limits.check_turn(nickname, conversation_id, reply_language([text]))
    try:
        held = svc.conversations.hold(conversation_id, nickname, text)
    except DeskError as exc:
        raise desk_error(exc) from None
    if held is not None:  # staff have the conversation: stored for them, no model is called
        svc.limits.count_turn(nickname, conversation_id)
        resp = jsonify(handled_by="staff", event=event_payload(held[0]),
                       state=state_payload(held[1], svc.presence.anyone_active()))
        resp.status_code = 202
        return resp
    lock = svc.conversation_lock(conversation_id)
    if not lock.acquire(blocking=False):
        raise ApiError(409, "conversation_busy", "the previous message of this conversation is still being answered")
    try:
        ticket = admit(svc, conversation_id, text)
    except ApiError:
        lock.release()
        raise
    svc.limits.count_turn(nickname, conversation_id)
    if _wants_stream():
        return _stream_turn(svc, lock, conversation_id, nickname, text, ticket, key)
    try:
        return jsonify(run_turn(svc, conversation_id, nickname, text, ticket=ticket, client_key=key))
    finally:
        lock.release()
