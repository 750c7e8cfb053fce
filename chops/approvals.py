"""The staff approval queue and the per-operation approval policies (the ``ApprovalStore`` part of
``chops.store.ConversationStore``).

A queued write is a plan of one or more steps (``Api.call_plan``): step 1 is the approval row's own
``operation`` and ``args``, further steps are rows of ``chops_approval_step``. Approving commits the
whole plan atomically through ``Api.call_plan`` with the key stored at queue time, so an approval
commits at most once however often it is clicked.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, Field

from chops import tables as t
from chops.domain.outcomes import Outcome
from chops.store_base import StoreError
from chops.store_base import dumps as _dumps
from chops.store_base import loads as _loads
from chops.store_base import now as _now

# "failed": staff approved, but the write could not be carried out (e.g. a precondition no longer
# holds); nothing was changed and the user is told.
APPROVAL_STATUSES = ("pending", "approved", "rejected", "failed")


class ApprovalStep(BaseModel):
    """One operation call of a queued plan."""

    operation: str
    args: dict[str, Any]


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
    steps: list[ApprovalStep] = Field(default_factory=list, description="every step, the first included")


class ApprovalStore:
    """Approvals and policies; the host class provides ``engine``, ``_writer`` (the BEGIN IMMEDIATE
    engine) and ``api`` (the domain's ``SystemApi``)."""

    engine: sa.Engine
    _writer: sa.Engine
    api: Any

    def queue_approval(self, *, nickname: str, operation: str, args: dict[str, Any], idempotency_key: str,
                       dry_run: Any = None, conversation_id: str | None = None, turn_id: int | None = None,
                       further_steps: Sequence[tuple[str, dict[str, Any]]] = ()) -> int:
        """Queue a write (``operation`` with ``args``, then ``further_steps``: one plan, one approval)
        for staff; returns the approval id. The same key queued again returns the existing id (a
        retried turn must not queue twice). ``conversation_id``, when given, must be a stored
        conversation (``StoreError`` ``not_found``): staff answer the user there."""
        existing = self._approval_id(idempotency_key)
        if existing is not None:
            return existing
        try:
            with self._writer.begin() as conn:
                if conversation_id is not None and conn.execute(
                        sa.select(t.conversation.c.id).where(t.conversation.c.id == conversation_id)).first() is None:
                    raise StoreError("not_found", f"no conversation {conversation_id!r} to queue the write in")
                approval_id = int(conn.execute(t.approval.insert().values(
                    created_at=_now(), conversation_id=conversation_id, turn_id=turn_id, nickname=nickname,
                    operation=operation, args_json=_dumps(args), idempotency_key=idempotency_key,
                    dry_run_json=_dumps(dry_run), status="pending")).inserted_primary_key[0])
                if further_steps:
                    conn.execute(t.approval_step.insert(), [
                        {"approval_id": approval_id, "position": n, "operation": op, "args_json": _dumps(a)}
                        for n, (op, a) in enumerate(further_steps, 2)])
                return approval_id
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
            further: dict[int, list[ApprovalStep]] = {}
            if rows:
                s = t.approval_step.c
                for r in conn.execute(sa.select(t.approval_step).where(s.approval_id.in_([r["id"] for r in rows]))
                                      .order_by(s.approval_id, s.position)).mappings():
                    further.setdefault(r["approval_id"], []).append(
                        ApprovalStep(operation=r["operation"], args=_loads(r["args_json"]) or {}))
        return [Approval(**{k: v for k, v in r.items() if not k.endswith("_json")}, args=_loads(r["args_json"]) or {},
                         dry_run=_loads(r["dry_run_json"]), result=_loads(r["result_json"]),
                         steps=[ApprovalStep(operation=r["operation"], args=_loads(r["args_json"]) or {}),
                                *further.get(r["id"], [])]) for r in rows]

    def decide_approval(self, approval_id: int, approve: bool, staff: str, note: str | None = None) -> Approval:
        """Approve (commit the plan through ``Api.call_plan`` with the stored key) or reject a pending write.

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
                result = self.api.call_plan(row.nickname, [(s.operation, s.args) for s in row.steps],
                                            idempotency_key=row.idempotency_key, request_id=f"approval:{approval_id}",
                                            staff=staff)
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
        if operation not in self.api.operations:
            raise StoreError("bad_request", f"unknown operation {operation!r}")
        p = t.operation_policy
        with self._writer.begin() as conn:
            updated = conn.execute(p.update().where(p.c.operation == operation)
                                   .values(always_needs_approval=always_needs_approval, updated_at=_now())).rowcount
            if not updated:
                conn.execute(p.insert().values(operation=operation, always_needs_approval=always_needs_approval,
                                               updated_at=_now()))
