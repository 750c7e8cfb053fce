"""``ConversationStore``: conversations, their turns, the staff approval queue and operation policies.

It owns the project tables ``chops_conversation``, ``chops_turn`` and, through ``ApprovalStore``
(``chops.approvals``), ``chops_approval``, ``chops_approval_step`` and ``chops_operation_policy``
(defined in ``chops.tables``). Every statement is SQLAlchemy Core (parameterised); every write is one
transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel

from chops import tables as t
from chops.approvals import APPROVAL_STATUSES, Approval, ApprovalStore
from chops.desk.log import insert_event, lock_conversation
from chops.domain.system import SystemApi
from chops.records import TurnRecord, TurnResult
from chops.store_base import StoreError
from chops.store_base import dumps as _dumps
from chops.store_base import loads as _loads
from chops.store_base import now as _now

__all__ = ["APPROVAL_STATUSES", "Approval", "CHANNELS", "Conversation", "ConversationStore", "StoreError"]

CHANNELS = ("widget", "cli", "eval", "console")


class Conversation(BaseModel):
    """One conversation (no turns; see ``ConversationStore.history``)."""

    id: str
    nickname: str
    channel: str
    created_at: datetime
    updated_at: datetime
    turns: int = 0


class ConversationStore(ApprovalStore):
    """Persistence of conversations and approvals over one engine."""

    def __init__(self, engine: sa.Engine, *, api: SystemApi) -> None:
        """``api`` (the domain's ``SystemApi``) runs approved writes and knows the operations."""
        self.engine = engine
        # Writes start with BEGIN IMMEDIATE on SQLite (ignored elsewhere): a deferred transaction that
        # reads and then writes fails with "database is locked" under concurrent writers.
        self._writer = engine.execution_options(sqlite_begin="immediate")
        self.api = api

    # --- conversations and turns -------------------------------------------------------------
    def create(self, nickname: str, channel: str = "widget") -> str:
        """A new conversation for ``nickname``; returns its id (a uuid4 string)."""
        if channel not in CHANNELS:
            raise StoreError("bad_request", f"channel must be one of {CHANNELS}, not {channel!r}")
        cid, now = str(uuid.uuid4()), _now()
        with self._writer.begin() as conn:
            conn.execute(t.conversation.insert().values(id=cid, nickname=nickname, channel=channel,
                                                        created_at=now, updated_at=now))
        return cid

    def get(self, conversation_id: str) -> Conversation | None:
        """The conversation with its turn count, or None."""
        return next(iter(self._conversations(t.conversation.c.id == conversation_id, limit=1)), None)

    def list_conversations(self, nickname: str | None = None, limit: int = 50) -> list[Conversation]:
        """Conversations, most recently active first (optionally of one nickname)."""
        where = t.conversation.c.nickname == nickname if nickname is not None else sa.true()
        return self._conversations(where, limit=limit)

    def _conversations(self, where: Any, limit: int) -> list[Conversation]:
        c = t.conversation
        count = sa.select(sa.func.count()).where(t.turn.c.conversation_id == c.c.id).scalar_subquery()
        query = (sa.select(c, count.label("turns")).where(where)
                 .order_by(c.c.updated_at.desc(), c.c.id).limit(limit))
        with self.engine.connect() as conn:
            return [Conversation(**row) for row in conn.execute(query).mappings()]

    def next_seq(self, conversation_id: str) -> int:
        """The sequence number the next turn of the conversation will get (1 for the first)."""
        with self.engine.connect() as conn:
            top = conn.execute(sa.select(sa.func.max(t.turn.c.seq))
                               .where(t.turn.c.conversation_id == conversation_id)).scalar()
        return (top or 0) + 1

    def turn_key(self, conversation_id: str, seq: int | None = None) -> str:
        """``"<conversation>:<seq>"``: what ``Agent.handle`` derives the idempotency key from."""
        return f"{conversation_id}:{seq if seq is not None else self.next_seq(conversation_id)}"

    def append_turn(self, conversation_id: str, text: str, result: TurnResult, *, seq: int | None = None,
                    also: Callable[[sa.Connection], None] | None = None) -> int:
        """Store one turn (with its trace and its ``turn`` event) and return its id; links a queued
        approval to the turn; ``also(conn)`` runs in the same transaction (e.g. a state change).
        ``seq`` defaults to the next number; two writers racing for one seq fail on the unique index."""
        now = _now()
        with self._writer.begin() as conn:
            if not lock_conversation(conn, conversation_id):  # the lock orders the conversation's events
                raise StoreError("not_found", f"no conversation {conversation_id!r}")
            if seq is None:
                top = conn.execute(sa.select(sa.func.max(t.turn.c.seq))
                                   .where(t.turn.c.conversation_id == conversation_id)).scalar()
                seq = (top or 0) + 1
            turn_id = conn.execute(t.turn.insert().values(
                conversation_id=conversation_id, seq=seq, created_at=now, user_text=text, reply=result.reply,
                route=result.route, operation=result.operation, args_json=_dumps(result.args),
                outcome=result.outcome, committed=result.committed, queued=result.queued,
                trace_json=_dumps(result.trace))).inserted_primary_key[0]
            conn.execute(t.conversation.update().where(t.conversation.c.id == conversation_id)
                         .values(updated_at=now))
            insert_event(conn, conversation_id, "turn", "agent", turn_id=turn_id)
            if result.approval_id is not None:
                conn.execute(t.approval.update().where(t.approval.c.id == result.approval_id)
                             .values(turn_id=turn_id, conversation_id=conversation_id))
            if also is not None:
                also(conn)
        return int(turn_id)

    def history(self, conversation_id: str, *, with_trace: bool = False, limit: int | None = None) -> list[TurnRecord]:
        """The conversation's turns, oldest first (the last ``limit`` of them when given)."""
        cols = [c for c in t.turn.c if with_trace or c.name != "trace_json"]
        query = sa.select(*cols).where(t.turn.c.conversation_id == conversation_id).order_by(t.turn.c.seq.desc())
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            rows = list(conn.execute(query).mappings())
        return [TurnRecord(id=r["id"], conversation_id=r["conversation_id"], seq=r["seq"],
                           created_at=r["created_at"], user_text=r["user_text"], reply=r["reply"],
                           route=r["route"], operation=r["operation"], args=_loads(r["args_json"]),
                           outcome=r["outcome"], committed=bool(r["committed"]), queued=bool(r["queued"]),
                           trace=_loads(r.get("trace_json")) if with_trace else None)
                for r in reversed(rows)]

