"""The audit log every pack's writes share (``chops_audit_log``): one row per committed step, which is also
the idempotency record (unique ``idempotency_key``). Written inside the pack's own transaction, so a write and
its audit row commit together or not at all."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from chops import tables as ct


class SqlAuditLog:
    """The audit log on one connection (the pack's unit of work's)."""

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn

    def find(self, idempotency_key: str) -> dict[str, Any] | None:
        """The audit row stored under ``idempotency_key``, if any."""
        row = self.conn.execute(sa.select(ct.audit_log).where(ct.audit_log.c.idempotency_key == idempotency_key))
        found = row.mappings().first()
        return dict(found) if found is not None else None

    def claim(self, entry: dict[str, Any], actor: str | None = None) -> int:
        """Insert the audit row first, so a concurrent call with the same key blocks on the unique
        index and then fails with ``IntegrityError`` (it replays the stored result instead).
        ``actor``: the staff member acting for the user, recorded in the same transaction."""
        audit_id = int(self.conn.execute(ct.audit_log.insert().values(entry)).inserted_primary_key[0])
        if actor is not None:
            self.conn.execute(ct.audit_actor.insert().values(audit_id=audit_id, actor=actor))
        return audit_id

    def complete(self, audit_id: int, values: dict[str, Any]) -> None:
        """Fill in the outcome, diff and result of a claimed audit row."""
        self.conn.execute(ct.audit_log.update().where(ct.audit_log.c.id == audit_id).values(values))
