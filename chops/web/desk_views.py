"""What the web API shows of the desk: a conversation's state, its log events, and desk errors as
stable API errors. Shared by the widget API, the event stream and the staff API."""

from __future__ import annotations

from typing import Any

from chops.desk import DeskError, State
from chops.desk.log import Event
from chops.web.errors import ApiError


def iso(value: Any) -> Any:
    """A datetime as ISO 8601 (UTC, naive as stored); anything else as it is."""
    return value.isoformat() if hasattr(value, "isoformat") else value


def staff_display_name(name: str) -> str:
    """How the user sees staff member ``name``: their account's display name (else the name itself)."""
    from chops.web.console import staff_accounts

    account = staff_accounts().get(name)
    return account.display_name if account is not None else name


def state_payload(state: State, staff_online: bool) -> dict:
    """``{state, staff, changed_at, staff_online}``: ``staff`` is the display name of the member
    handling it (state staff)."""
    return {"state": state.state, "staff": staff_display_name(state.staff) if state.staff else None,
            "changed_at": iso(state.changed_at), "staff_online": staff_online}


def event_payload(event: Event, turn: dict | None = None) -> dict:
    """One log event as JSON: ``{id, kind, created_at, actor}`` plus the body (``text``,
    ``display_name``, ``from``/``to``), or ``turn`` (the user's view of the turn) for kind turn."""
    out = {"id": event.id, "kind": event.kind, "created_at": iso(event.created_at), "actor": event.actor}
    if event.kind == "turn":
        return {**out, "turn": turn}
    return {**out, **event.body}


def desk_error(exc: DeskError) -> ApiError:
    """404 ``conversation_not_found``; 409 ``already_claimed`` / ``invalid_state`` / ``conversation_closed``."""
    status = 404 if exc.code == "conversation_not_found" else 409
    return ApiError(status, exc.code, exc.message, **({"state": exc.state} if exc.state else {}))
