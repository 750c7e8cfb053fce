"""A conversation's state and its changes: ``agent`` → ``waiting`` → ``staff`` (one member) → ``agent``
or ``closed`` (DESIGN.md "Around the agent"), each stored with who changed it and when, plus the
messages held for staff and staff replies. Only the conversation service and the staff endpoints call
this; each change is one transaction that locks the conversation's row, writes the state with ONE
conditional UPDATE (compare-and-set on the state read under the lock: two members claiming at once,
exactly one wins) and appends its event to the log.

Transitions (anything else is ``DeskError`` ``invalid_state``):

| action | from | to | by |
|---|---|---|---|
| ``request_person`` | agent | waiting | the user (the agent's hand-off route) |
| ``claim`` | waiting | staff | a member (``already_claimed`` when another holds it) |
| ``release`` | staff | agent | the member holding it |
| ``close`` | waiting, staff | closed | a member (the holder, when claimed) |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from chops import tables as t
from chops.desk.log import Event, events_after, insert_event, lock_conversation, now

HELD_STATES = ("waiting", "staff")  # a user's message goes to staff, the model is not called


class DeskError(Exception):
    """A desk request that cannot be done. ``code``: ``conversation_not_found``, ``already_claimed``,
    ``invalid_state``, ``conversation_closed``; ``state`` is the conversation's current state."""

    def __init__(self, code: str, message: str, state: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.state = code, message, state


@dataclass(frozen=True)
class State:
    """A conversation's current state; ``staff`` is the member holding it (state ``staff``)."""

    conversation_id: str
    state: str = "agent"
    staff: str | None = None
    changed_by: str | None = None
    changed_at: datetime | None = None


def _read(conn: sa.Connection, conversation_id: str) -> State:
    s = t.conversation_state
    row = conn.execute(sa.select(s).where(s.c.conversation_id == conversation_id)).mappings().first()
    return State(**row) if row is not None else State(conversation_id)  # no row: the agent has it


class Desk:
    """State changes and staff messages over one engine. ``on_event(conversation_id, event_id)`` is
    called after each commit (the in-process wake-up of event streams; the database stays the truth)."""

    def __init__(self, engine: sa.Engine, *, on_event: Callable[[str, int], None] | None = None) -> None:
        self.engine = engine
        self._writer = engine.execution_options(sqlite_begin="immediate")
        self.on_event = on_event

    def state(self, conversation_id: str) -> State:
        """The current state ("agent" when it never changed)."""
        with self.engine.connect() as conn:
            return _read(conn, conversation_id)

    def hold(self, conversation_id: str, nickname: str, text: str) -> tuple[Event, State] | None:
        """While the conversation is waiting for or handled by staff, store ``text`` as a ``user``
        event and return it with the state; None when the agent should answer. Closed: ``DeskError``."""
        if self.state(conversation_id).state == "agent":
            return None  # the common case: one indexed read, no write transaction on every message
        with self._writer.begin() as conn:
            self._lock(conn, conversation_id)
            current = _read(conn, conversation_id)
            if current.state == "closed":
                raise DeskError("conversation_closed", "this conversation was closed; start a new one", "closed")
            if current.state not in HELD_STATES:
                return None
            event_id = insert_event(conn, conversation_id, "user", nickname, body={"text": text})
        self._notify(conversation_id, event_id)
        return self._event(conversation_id, event_id), current

    def request_person(self, conn: sa.Connection, conversation_id: str, nickname: str) -> int | None:
        """Inside the caller's transaction (storing the hand-off turn, conversation locked): agent →
        waiting, by the user. Already with staff: nothing changes (None); else the event id."""
        current = _read(conn, conversation_id)
        if current.state != "agent":
            return None
        return self._set(conn, current, "waiting", nickname)

    def claim(self, conversation_id: str, staff: str, display_name: str | None = None) -> State:
        """waiting → staff, held by ``staff``. Claiming one's own conversation again changes nothing."""
        return self._change(conversation_id, staff, "staff", ("waiting",), display_name=display_name or staff)

    def release(self, conversation_id: str, staff: str) -> State:
        """staff → agent: the agent answers the next message (and sees the staff messages as history)."""
        return self._change(conversation_id, staff, "agent", ("staff",))

    def close(self, conversation_id: str, staff: str) -> State:
        """waiting or staff → closed; a conversation another member holds is theirs to close."""
        return self._change(conversation_id, staff, "closed", HELD_STATES)

    def staff_message(self, conversation_id: str, staff: str, text: str, display_name: str | None = None) -> Event:
        """A reply from the member holding the conversation (state ``staff``)."""
        with self._writer.begin() as conn:
            self._lock(conn, conversation_id)
            self._check_holder(_read(conn, conversation_id), staff, ("staff",))
            event_id = insert_event(conn, conversation_id, "staff", staff,
                                    body={"text": text, "display_name": display_name or staff})
        self._notify(conversation_id, event_id)
        return self._event(conversation_id, event_id)

    # --- internals ------------------------------------------------------------------------------
    def _lock(self, conn: sa.Connection, conversation_id: str) -> None:
        if not lock_conversation(conn, conversation_id):
            raise DeskError("conversation_not_found", f"no conversation {conversation_id!r}")

    @staticmethod
    def _check_holder(current: State, staff: str, allowed: tuple[str, ...]) -> None:
        if current.state == "staff" and current.staff != staff:
            raise DeskError("already_claimed", f"{current.staff} is handling this conversation", "staff")
        if current.state not in allowed:
            raise DeskError("invalid_state", f"the conversation is {current.state!r}; this needs "
                            f"{' or '.join(allowed)}", current.state)

    def _change(self, conversation_id: str, staff: str, to: str, allowed: tuple[str, ...], *,
                display_name: str | None = None) -> State:
        with self._writer.begin() as conn:
            self._lock(conn, conversation_id)
            current = _read(conn, conversation_id)
            if to == "staff" and current.state == "staff" and current.staff == staff:
                return current  # a second click of the member's own claim
            self._check_holder(current, staff, allowed)
            event_id = self._set(conn, current, to, staff, display_name=display_name)
            changed = _read(conn, conversation_id)
        self._notify(conversation_id, event_id)
        return changed

    def _set(self, conn: sa.Connection, current: State, to: str, by: str, *, display_name: str | None = None) -> int:
        """Compare-and-set the state (one conditional UPDATE, or the first row's INSERT) and log it."""
        s, cid = t.conversation_state, current.conversation_id
        values = {"state": to, "staff": by if to == "staff" else None, "changed_by": by, "changed_at": now()}
        if current.changed_at is None:  # no row yet: the agent had it; the row lock makes this insert safe
            conn.execute(s.insert().values(conversation_id=cid, **values))
        elif not conn.execute(s.update().where(s.c.conversation_id == cid, s.c.state == current.state)
                              .values(**values)).rowcount:
            raise DeskError("already_claimed", "the conversation changed meanwhile", current.state)
        body = {"from": current.state, "to": to, **({"display_name": display_name} if display_name else {})}
        return insert_event(conn, cid, "state", by, body=body)

    def _event(self, conversation_id: str, event_id: int) -> Event:
        return events_after(self.engine, conversation_id, event_id - 1, limit=1)[0]

    def _notify(self, conversation_id: str, event_id: int) -> None:
        if self.on_event is not None:
            self.on_event(conversation_id, event_id)
