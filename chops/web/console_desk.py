"""The console's desk: the queue of conversations waiting for a person, claiming one, replying,
releasing it to the agent and closing it. Signed in like the rest of the console (same session,
same CSRF-checked forms); every page view records the member as active."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for

from chops.desk import DeskError
from chops.desk.log import events_after
from chops.desk.queue import QUEUE_STATES, staff_queue
from chops.web import console
from chops.web.desk_views import staff_display_name
from chops.web.services import services

bp = Blueprint("console_desk", __name__, url_prefix="/console/desk", template_folder="templates")
bp.before_request(console._require_staff)
LOG_LIMIT = 500


@bp.before_request
def _seen():
    name = console.current_staff()
    if name and name != "api-key":
        services().presence.seen(name)


@bp.app_template_global()
def desk_panel(conversation_id: str) -> dict:
    """The desk part of a console conversation page: its state and its log (turns, messages, changes)."""
    svc = services()
    return {"state": svc.desk.state(conversation_id), "events": events_after(svc.engine, conversation_id, 0, LOG_LIMIT),
            "me": console.current_staff(), "turns": {t.id: t for t in svc.store.history(conversation_id)}}


@bp.get("/")
def queue():
    """Conversations waiting for a person (``?state=staff|closed`` for the others), longest first."""
    state = request.args.get("state", "waiting")
    if state not in QUEUE_STATES:
        abort(400, f"state is one of {', '.join(QUEUE_STATES)}")
    return render_template("console/queue.html", items=staff_queue(services().engine, state), state=state,
                           states=QUEUE_STATES)


@bp.get("/fragments/queue")
def queue_fragment():
    """The queue's rows, for the page's auto-refresh."""
    state = request.args.get("state", "waiting")
    return render_template("console/_queue.html", items=staff_queue(services().engine, state)
                           if state in QUEUE_STATES else [])


@bp.get("/fragments/<conversation_id>")
def log_fragment(conversation_id: str):
    """One conversation's desk log, for the conversation page's auto-refresh."""
    return render_template("console/_desk_log.html", desk=desk_panel(conversation_id))


def _act(conversation_id: str, action, *args):
    try:
        action(conversation_id, console.current_staff(), *args)
    except DeskError as exc:
        flash(exc.message, "error")
        if exc.code == "conversation_not_found":
            abort(404, exc.message)
    return redirect(url_for("console.conversation", conversation_id=conversation_id))


@bp.post("/<conversation_id>/claim")
def claim(conversation_id: str):
    """Take the conversation: its user's messages now come to you."""
    return _act(conversation_id, services().desk.claim, staff_display_name(console.current_staff()))


@bp.post("/<conversation_id>/release")
def release(conversation_id: str):
    """Give the conversation back to the agent."""
    return _act(conversation_id, services().desk.release)


@bp.post("/<conversation_id>/close")
def close(conversation_id: str):
    """Close the conversation."""
    return _act(conversation_id, services().desk.close)


@bp.post("/<conversation_id>/messages")
def reply(conversation_id: str):
    """Send the reply box's text to the user."""
    text = (request.form.get("text") or "").strip()
    if not text:
        flash("the reply is empty", "error")
        return redirect(url_for("console.conversation", conversation_id=conversation_id))
    return _act(conversation_id, services().desk.staff_message, text[:services().settings.max_message_chars],
                staff_display_name(console.current_staff()))
