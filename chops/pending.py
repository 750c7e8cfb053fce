"""Changes waiting for the user's "yes" (``chops_pending_change``): what the agent described and keeps.

A verified plan of writes that the pack marks ``confirm`` is not committed at once: the agent stores it
here — the exact operation calls, the dry run's diff it was described from, the idempotency key its commit
will use, an expiry — and asks. The next message decides (``chops.pipeline.confirm``). At most one change
is open per conversation: offering a new one supersedes the old. Every state change is a conditional
update from ``open``, so two messages racing to decide one change cannot both act on it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel

from chops import tables as t
from chops.store_base import dumps, loads, now

OPEN = "open"
CLOSED_STATES = ("committed", "declined", "dropped", "lapsed", "refused", "superseded")


class PendingChange(BaseModel):
    """One described change: its plan, the diff it was described from, and its state."""

    id: int
    conversation_id: str
    nickname: str
    created_at: datetime
    expires_at: datetime
    idempotency_key: str
    steps: list[tuple[str, dict[str, Any]]]
    diff: list[dict[str, Any]]
    description: str
    state: str = OPEN

    def lapsed(self, at: datetime | None = None) -> bool:
        """True once the change has waited longer than it may."""
        return (at or now()) >= self.expires_at


class PendingChanges:
    """The pending changes of every conversation, over one engine."""

    def __init__(self, engine: sa.Engine, ttl_s: float = 900.0) -> None:
        """``ttl_s``: how long a change waits for the user's answer."""
        self.engine, self.ttl_s = engine, ttl_s

    def offer(self, *, conversation_id: str, nickname: str, steps: list[tuple[str, dict[str, Any]]],
              diff: list[dict[str, Any]], description: str, idempotency_key: str) -> PendingChange:
        """Keep a described change (superseding the conversation's open one) and return it."""
        at = now()
        row = {"conversation_id": conversation_id, "nickname": nickname, "created_at": at,
               "expires_at": at + timedelta(seconds=self.ttl_s), "idempotency_key": idempotency_key,
               "steps_json": dumps([list(s) for s in steps]), "diff_json": dumps(diff), "description": description,
               "state": OPEN}
        with self.engine.begin() as conn:
            conn.execute(t.pending_change.update()
                         .where(t.pending_change.c.conversation_id == conversation_id,
                                t.pending_change.c.state == OPEN)
                         .values(state="superseded", resolved_at=at))
            row["id"] = int(conn.execute(t.pending_change.insert().values(row)).inserted_primary_key[0])
        return _change(row)

    def open_for(self, conversation_id: str) -> PendingChange | None:
        """The conversation's open change (lapsed or not: the caller decides what a late answer means)."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(t.pending_change)
                               .where(t.pending_change.c.conversation_id == conversation_id,
                                      t.pending_change.c.state == OPEN)
                               .order_by(t.pending_change.c.id.desc()).limit(1)).mappings().first()
        return _change(dict(row)) if row is not None else None

    def close(self, change_id: int, state: str) -> bool:
        """Move an open change to ``state``; False when it was no longer open (another message decided it)."""
        if state not in CLOSED_STATES:
            raise ValueError(f"unknown state {state!r}")
        with self.engine.begin() as conn:
            done = conn.execute(t.pending_change.update()
                                .where(t.pending_change.c.id == change_id, t.pending_change.c.state == OPEN)
                                .values(state=state, resolved_at=now()))
        return done.rowcount == 1


def _change(row: dict[str, Any]) -> PendingChange:
    steps = [(name, args) for name, args in loads(row["steps_json"])]
    return PendingChange(id=row["id"], conversation_id=row["conversation_id"], nickname=row["nickname"],
                         created_at=row["created_at"], expires_at=row["expires_at"],
                         idempotency_key=row["idempotency_key"], steps=steps, diff=loads(row["diff_json"]) or [],
                         description=row["description"], state=row["state"])
