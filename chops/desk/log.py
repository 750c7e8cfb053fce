"""The conversation event log (``chops_conversation_event``): one ordered log per conversation.

Kinds and bodies (``body_json``), read by the widget's event stream, the console and the analytics:

| kind | actor | body |
|---|---|---|
| ``turn`` | ``"agent"`` | none: ``turn_id`` points at the ``chops_turn`` row |
| ``user`` | the user's nickname | ``{"text"}``: a message held for staff (state waiting or staff) |
| ``staff`` | the staff member's name | ``{"text", "display_name"}`` |
| ``state`` | who changed it (nickname, staff name) | ``{"from", "to"}`` (+ ``"display_name"`` of the member on a claim) |

Ids are global and increasing. Every insert first locks the conversation's row (``lock_conversation``),
so the events of ONE conversation get their ids in commit order: a reader that has seen id N of a
conversation can never later find a smaller id of it committed (auto-increment values are handed out
at insert time, and two inserts into one conversation never overlap). That makes ``Last-Event-ID``
resumption exact: nothing lost, nothing repeated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import sqlalchemy as sa

from chops import tables as t

KINDS = t.EVENT_KINDS
MESSAGE_KINDS = ("user", "staff")


def now() -> datetime:
    """Naive UTC, as every project table stores it."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


@dataclass(frozen=True)
class Event:
    """One row of the log, its body parsed."""

    id: int
    conversation_id: str
    created_at: datetime
    kind: str
    actor: str
    turn_id: int | None
    body: dict[str, Any]

    @property
    def text(self) -> str:
        """The message text (user and staff events), else ""."""
        return str(self.body.get("text") or "")


def lock_conversation(conn: sa.Connection, conversation_id: str) -> bool:
    """Lock the conversation's row for this transaction (``SELECT … FOR UPDATE``; SQLite's
    ``BEGIN IMMEDIATE`` already serialises writers); False when there is no such conversation."""
    c = t.conversation
    return conn.execute(sa.select(c.c.id).where(c.c.id == conversation_id).with_for_update()).first() is not None


def insert_event(conn: sa.Connection, conversation_id: str, kind: str, actor: str, *,
                 body: dict[str, Any] | None = None, turn_id: int | None = None) -> int:
    """Append one event inside the caller's transaction (which has locked the conversation); its id."""
    if kind not in KINDS:
        raise ValueError(f"event kind must be one of {KINDS}, not {kind!r}")
    return int(conn.execute(t.conversation_event.insert().values(
        conversation_id=conversation_id, created_at=now(), kind=kind, actor=actor[:64], turn_id=turn_id,
        body_json=json.dumps(body, ensure_ascii=False) if body is not None else None)).inserted_primary_key[0])


def _event(row: Any) -> Event:
    return Event(id=int(row["id"]), conversation_id=row["conversation_id"], created_at=row["created_at"],
                 kind=row["kind"], actor=row["actor"], turn_id=row["turn_id"],
                 body=json.loads(row["body_json"]) if row["body_json"] else {})


def events_after(engine: sa.Engine, conversation_id: str, after: int = 0, limit: int = 200) -> list[Event]:
    """The conversation's events with an id above ``after``, oldest first (at most ``limit``)."""
    e = t.conversation_event
    query = (sa.select(e).where(e.c.conversation_id == conversation_id, e.c.id > after)
             .order_by(e.c.id).limit(limit))
    with engine.connect() as conn:
        return [_event(r) for r in conn.execute(query).mappings()]


def recent_events(engine: sa.Engine, conversation_id: str, kinds: tuple[str, ...], limit: int) -> list[Event]:
    """The newest ``limit`` events of ``kinds``, oldest first."""
    e = t.conversation_event
    query = (sa.select(e).where(e.c.conversation_id == conversation_id, e.c.kind.in_(kinds))
             .order_by(e.c.id.desc()).limit(limit))
    with engine.connect() as conn:
        return [_event(r) for r in reversed(list(conn.execute(query).mappings()))]


def latest_ids(engine: sa.Engine, conversation_ids: list[str]) -> dict[str, int]:
    """``{conversation id: its newest event id}`` (one grouped query over the (conversation, id) index)."""
    e = t.conversation_event
    out: dict[str, int] = {}
    with engine.connect() as conn:
        for start in range(0, len(conversation_ids), 500):
            chunk = conversation_ids[start:start + 500]
            query = (sa.select(e.c.conversation_id, sa.func.max(e.c.id))
                     .where(e.c.conversation_id.in_(chunk)).group_by(e.c.conversation_id))
            out.update({cid: int(top) for cid, top in conn.execute(query)})
    return out
