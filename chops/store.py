"""``ConversationStore``: conversations, their turns, the staff approval queue and operation policies.

It owns the project tables ``chops_conversation``, ``chops_turn``, ``chops_approval`` and
``chops_operation_policy`` (defined in ``apis.tables``). Every statement is SQLAlchemy Core
(parameterised); every write is one transaction. Approving a queued write goes through ``Api.call``
with the key stored at queue time, so an approval commits at most once however often it is clicked.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel

from apis import tables as t
from apis.outcomes import Outcome
from chops.records import TurnRecord, TurnResult

CHANNELS = ("widget", "cli", "eval", "console")
# "failed": staff approved, but the write could not be carried out (e.g. a precondition no longer
# holds); nothing was changed and the user is told.
APPROVAL_STATUSES = ("pending", "approved", "rejected", "failed")


class StoreError(Exception):
    """A store request that cannot be done; ``code`` is stable (``not_found``, ``already_decided``,
    ``bad_request``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Conversation(BaseModel):
    """One conversation (no turns; see ``ConversationStore.history``)."""

    id: str
    nickname: str
    channel: str
    created_at: datetime
    updated_at: datetime
    turns: int = 0


class Approval(BaseModel):
    """One queued write waiting for (or decided by) staff."""

    id: int
    created_at: datetime
    decided_at: datetime | None = None
    conversation_id: str | None = None
    turn_id: int | None = None
    nickname: str
    operation: str
    args: dict[str, Any]
    idempotency_key: str
    dry_run: dict[str, Any] | None = None
    status: str
    decided_by: str | None = None
    note: str | None = None
    result: dict[str, Any] | None = None


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)  # naive UTC: portable DateTime columns


def _dumps(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, ensure_ascii=False, default=str)


def _loads(text: str | None) -> Any:
    return json.loads(text) if text else None


class ConversationStore:
    """Persistence of conversations and approvals over one engine."""

    def __init__(self, engine: sa.Engine, *, api: Any | None = None) -> None:
        """``api`` (an ``apis.service.Api``) runs approved writes; default: one over ``engine``."""
        self.engine = engine
        # Writes start with BEGIN IMMEDIATE on SQLite (ignored elsewhere): a deferred transaction that
        # reads and then writes fails with "database is locked" under concurrent writers.
        self._writer = engine.execution_options(sqlite_begin="immediate")
        self._api = api

    @property
    def api(self) -> Any:
        """The Api approvals commit through."""
        if self._api is None:
            from apis.service import Api

            self._api = Api(self.engine)
        return self._api

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
        rows = self._conversations(t.conversation.c.id == conversation_id, limit=1)
        return rows[0] if rows else None

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

    def append_turn(self, conversation_id: str, text: str, result: TurnResult, *, seq: int | None = None) -> int:
        """Store one turn (with its trace) and return its id; links a queued approval to the turn.

        ``seq`` defaults to the next number; two writers racing for one seq fail on the unique index
        rather than interleaving silently.
        """
        now = _now()
        with self._writer.begin() as conn:
            if conn.execute(sa.select(t.conversation.c.id).where(t.conversation.c.id == conversation_id)).first() is None:
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
            if result.approval_id is not None:
                conn.execute(t.approval.update().where(t.approval.c.id == result.approval_id)
                             .values(turn_id=turn_id, conversation_id=conversation_id))
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

    # --- approvals ------------------------------------------------------------------------------
    def queue_approval(self, *, nickname: str, operation: str, args: dict[str, Any], idempotency_key: str,
                       dry_run: Any = None, conversation_id: str | None = None, turn_id: int | None = None) -> int:
        """Queue a write for staff; returns the approval id. The same key queued again returns the
        existing id (a retried turn must not queue twice). ``conversation_id``, when given, must be a
        stored conversation (``StoreError`` ``not_found``): staff answer the user there."""
        existing = self._approval_id(idempotency_key)
        if existing is not None:
            return existing
        try:
            with self._writer.begin() as conn:
                if conversation_id is not None and conn.execute(
                        sa.select(t.conversation.c.id).where(t.conversation.c.id == conversation_id)).first() is None:
                    raise StoreError("not_found", f"no conversation {conversation_id!r} to queue the write in")
                return int(conn.execute(t.approval.insert().values(
                    created_at=_now(), conversation_id=conversation_id, turn_id=turn_id, nickname=nickname,
                    operation=operation, args_json=_dumps(args), idempotency_key=idempotency_key,
                    dry_run_json=_dumps(dry_run), status="pending")).inserted_primary_key[0])
        except sa.exc.IntegrityError:
            existing = self._approval_id(idempotency_key)  # a concurrent queue of the same key won
            if existing is None:
                raise
            return existing

    def _approval_id(self, key: str) -> int | None:
        with self.engine.connect() as conn:
            return conn.execute(sa.select(t.approval.c.id).where(t.approval.c.idempotency_key == key)).scalar()

    def get_approval(self, approval_id: int) -> Approval | None:
        """One approval, or None."""
        rows = self._approvals(t.approval.c.id == approval_id)
        return rows[0] if rows else None

    def list_approvals(self, status: str | None = "pending", limit: int = 100) -> list[Approval]:
        """Approvals with ``status`` (None = all), oldest first."""
        if status is not None and status not in APPROVAL_STATUSES:
            raise StoreError("bad_request", f"status must be one of {APPROVAL_STATUSES}, not {status!r}")
        where = t.approval.c.status == status if status is not None else sa.true()
        return self._approvals(where, limit=limit)

    def _approvals(self, where: Any, limit: int = 100) -> list[Approval]:
        query = sa.select(t.approval).where(where).order_by(t.approval.c.id).limit(limit)
        with self.engine.connect() as conn:
            rows = list(conn.execute(query).mappings())
        return [Approval(**{k: v for k, v in r.items() if not k.endswith("_json")}, args=_loads(r["args_json"]) or {},
                         dry_run=_loads(r["dry_run_json"]), result=_loads(r["result_json"])) for r in rows]

    def decide_approval(self, approval_id: int, approve: bool, staff: str, note: str | None = None) -> Approval:
        """Approve (commit the write through ``Api.call`` with the stored key) or reject a pending write.

        The row is claimed with a conditional UPDATE first, so two staff deciding at once cannot both
        act; the stored idempotency key makes even a repeated commit write once. A write that runs but
        does not commit (its outcome is not ok) marks the approval ``failed``. If the write raises (the
        database went away), the claim is released (the request is pending again) and the error propagates.
        """
        status = "approved" if approve else "rejected"
        with self._writer.begin() as conn:
            claimed = conn.execute(t.approval.update()
                                   .where(t.approval.c.id == approval_id, t.approval.c.status == "pending")
                                   .values(status=status, decided_at=_now(), decided_by=staff, note=note)).rowcount
        if not claimed:
            current = self.get_approval(approval_id)
            if current is None:
                raise StoreError("not_found", f"no approval {approval_id}")
            raise StoreError("already_decided", f"approval {approval_id} is already {current.status}")
        if approve:
            row = self.get_approval(approval_id)
            try:
                result = self.api.call(row.operation, row.nickname, row.args, idempotency_key=row.idempotency_key,
                                       request_id=f"approval:{approval_id}")
            except BaseException:
                self._release_claim(approval_id, staff)
                raise
            done = Outcome(result.outcome).succeeded
            with self._writer.begin() as conn:
                conn.execute(t.approval.update().where(t.approval.c.id == approval_id)
                             .values(result_json=_dumps(result), status="approved" if done else "failed"))
        return self.get_approval(approval_id)

    def _release_claim(self, approval_id: int, staff: str) -> None:
        # The write failed (its transaction rolled back), so the request goes back to the queue
        # rather than sitting "approved" with no result; a retry replays through the stored key.
        a = t.approval.c
        with self._writer.begin() as conn:
            conn.execute(t.approval.update()
                         .where(a.id == approval_id, a.status == "approved", a.decided_by == staff,
                                a.result_json.is_(None))
                         .values(status="pending", decided_at=None, decided_by=None, note=None))

    # --- operation policies ----------------------------------------------------------------------
    def needs_approval(self, operation: str) -> bool:
        """True when staff must approve every write of ``operation`` (chops_operation_policy)."""
        with self.engine.connect() as conn:
            value = conn.execute(sa.select(t.operation_policy.c.always_needs_approval)
                                 .where(t.operation_policy.c.operation == operation)).scalar()
        return bool(value)

    def get_policies(self) -> dict[str, bool]:
        """``{operation: always_needs_approval}`` for every operation with a stored policy."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(t.operation_policy.c.operation, t.operation_policy.c.always_needs_approval))
            return {op: bool(flag) for op, flag in rows}

    def set_policy(self, operation: str, always_needs_approval: bool) -> None:
        """Create or update the policy of ``operation`` (must be a registry operation)."""
        from apis.registry import OPERATIONS

        if operation not in OPERATIONS:
            raise StoreError("bad_request", f"unknown operation {operation!r}")
        p = t.operation_policy
        with self._writer.begin() as conn:
            updated = conn.execute(p.update().where(p.c.operation == operation)
                                   .values(always_needs_approval=always_needs_approval, updated_at=_now())).rowcount
            if not updated:
                conn.execute(p.insert().values(operation=operation, always_needs_approval=always_needs_approval,
                                               updated_at=_now()))
