"""The staff desk's JSON API: the queue, claim, reply, release, close.

Authorised by ``X-Staff-Key`` with ``X-Staff-Name`` naming the acting member, or by a console session
(``chops.web.console.current_staff``); a session's POST must also send its CSRF token as
``X-CSRF-Token`` (the cookie alone would let another site act). Every authorised request records the
member as active (``chops.desk.Presence``).
"""

from __future__ import annotations

from dataclasses import asdict

from flask import Blueprint, g, jsonify, request

from chops.desk import DeskError
from chops.desk.queue import QUEUE_STATES, staff_queue
from chops.web.chat import message_text
from chops.web.desk_views import desk_error, event_payload, iso, staff_display_name, state_payload
from chops.web.errors import ApiError
from chops.web.services import services
from chops.web.staff_auth import require_staff_api

bp = Blueprint("staff_api", __name__, url_prefix="/v1/staff")
SCRIPT_NAME = "api-key"  # a script without X-Staff-Name: not a person, so not "active"


@bp.before_request
def _require_staff():
    name = require_staff_api()
    if name != SCRIPT_NAME:
        services().presence.seen(name)
    g.staff = name


def _changed(action, conversation_id: str, *args):
    try:
        state = action(conversation_id, g.staff, *args)
    except DeskError as exc:
        raise desk_error(exc) from None
    return jsonify(conversation_id=conversation_id, **state_payload(state, True))


@bp.get("/conversations")
def queue():
    """``?state=waiting`` (default), ``staff`` or ``closed``: the conversations, longest waiting first."""
    state = request.args.get("state", "waiting")
    if state not in QUEUE_STATES:
        raise ApiError(400, "invalid_field", f"state must be one of {', '.join(QUEUE_STATES)}", field="state")
    items = [{**asdict(item), "since": iso(item.since)} for item in staff_queue(services().engine, state)]
    return jsonify(state=state, conversations=items)


@bp.post("/conversations/<conversation_id>/claim")
def claim(conversation_id: str):
    """Take a waiting conversation (409 ``already_claimed`` when another member holds it)."""
    return _changed(services().desk.claim, conversation_id, staff_display_name(g.staff))


@bp.post("/conversations/<conversation_id>/release")
def release(conversation_id: str):
    """Give the conversation back to the agent."""
    return _changed(services().desk.release, conversation_id)


@bp.post("/conversations/<conversation_id>/close")
def close(conversation_id: str):
    """Close a waiting or claimed conversation."""
    return _changed(services().desk.close, conversation_id)


@bp.post("/conversations/<conversation_id>/messages")
def message(conversation_id: str):
    """``{"text"}``: a reply to the user from the member holding the conversation; 201 with the event."""
    text = message_text(services()).strip()
    try:
        event = services().desk.staff_message(conversation_id, g.staff, text, staff_display_name(g.staff))
    except DeskError as exc:
        raise desk_error(exc) from None
    resp = jsonify(event_payload(event))
    resp.status_code = 201
    return resp
