"""The widget's JSON API: start a conversation, send a message (JSON or Server-Sent Events), read history.

Authentication: ``POST /v1/conversations`` takes the user's token signed by the host site (or, in
demo mode only, a bare ``nickname``) and returns a *conversation token* — signed by this service,
bound to that conversation and user, expiring no later than the user's token. Every follow-up call
sends it as ``Authorization: Bearer <token>`` (the user's own token is accepted too). The acting
user is always the conversation's nickname: never the message body, never model output.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import sqlalchemy as sa
from flask import Blueprint, jsonify, request

from chops.desk import DeskError
from chops.desk.log import MESSAGE_KINDS, recent_events
from chops.conversation import ConversationService
from chops.i18n import LANGUAGES, SOURCE_LANGUAGE, reply_language
from chops.web.services import Services, services
from chops.web.desk_views import desk_error, event_payload, iso, state_payload
from chops.web.errors import ApiError
from chops.web.schemas import NICKNAME_MAX, CreateConversation, PostMessage, parse_body
from chops.web.tokens import TokenError, checks_from, sign_token, verify_token
from chops.web.turns import (admit, client_key, field as _get, replayed, run_turn, stream_turn, turn_payload,
                             wants_stream)

log = logging.getLogger(__name__)
bp = Blueprint("chat", __name__, url_prefix="/v1")

DEMO_TOKEN_TTL_S = 24 * 3600  # conversation tokens in demo mode (no user token to bound them)


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
    from chops.tables import conversation

    if len(conversation_id) > 64:
        return None
    with svc.engine.connect() as conn:
        row = conn.execute(sa.select(conversation).where(conversation.c.id == conversation_id)).mappings().first()
    return dict(row) if row is not None else None


@bp.get("/greeting")
def greeting():
    """The agent's opening line in the language the browser asks for (``Accept-Language``, or ``?lang=``):
    the widget shows it when it opens, before any conversation exists (no sign-in, nothing stored)."""
    lang = request.args.get("lang") or request.accept_languages.best_match(LANGUAGES) or SOURCE_LANGUAGE
    lang = lang.split("-")[0].lower()
    return jsonify(greeting=ConversationService.greeting(lang if lang in LANGUAGES else SOURCE_LANGUAGE),
                   language=lang if lang in LANGUAGES else SOURCE_LANGUAGE)


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
        return replayed(done)
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
    if wants_stream():
        return stream_turn(svc, lock, conversation_id, nickname, text, ticket, key)
    try:
        return jsonify(run_turn(svc, conversation_id, nickname, text, ticket=ticket, client_key=key))
    finally:
        lock.release()
