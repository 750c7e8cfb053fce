"""An in-memory unit of work for unit tests (cosmicpython's ``FakeUnitOfWork``): the same repository
methods as the SQL ones, over plain lists of dicts; ``commit`` keeps the changes, leaving the block
without it restores the state as it was at ``__enter__``.

Usage: ``state = FakeState(members=[...], ...)``; ``Api(None, uow_factory=state.uow)``.
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from apis.cphos.repositories import role_name, update_changes
from apis.cphos.uow import AbstractUnitOfWork
from chops.domain.outcomes import Change

Row = dict[str, Any]


@dataclass
class FakeState:
    """The whole fake database. ``problems_left`` maps member id -> unmarked count."""

    members: list[Row] = field(default_factory=list)
    schools: list[Row] = field(default_factory=list)
    areas: list[Row] = field(default_factory=list)
    admins: set[int] = field(default_factory=set)
    problems_left: dict[int, int] = field(default_factory=dict)
    audit: list[Row] = field(default_factory=list)
    commits: int = 0

    def uow(self, write: bool = False) -> "FakeUnitOfWork":
        """A unit of work over this state (the ``uow_factory`` ``Api`` expects)."""
        return FakeUnitOfWork(self)


class _FakeRepo:
    def __init__(self, uow: "FakeUnitOfWork"):
        self.uow = uow

    @property
    def s(self) -> FakeState:
        """The shared fake state."""
        return self.uow.state


class FakeMembers(_FakeRepo):
    """In-memory ``SqlMemberRepository``."""

    def by_nickname(self, nickname: str) -> list[Row]:
        """Members with this nickname."""
        return [m for m in self.s.members if m["nickname"] == nickname]

    def active_by_user_name(self, user_name: str) -> list[Row]:
        """Approved members with this user name."""
        return [m for m in self.s.members if m["user_name"] == user_name and m["status"] != 0]

    def named(self, names: Collection[str]) -> list[Row]:
        """``id``, ``nickname`` and ``user_name`` of the members whose nickname or user name is in ``names``."""
        names = set(names)
        rows = sorted(self.s.members, key=lambda m: m["id"])
        return [{k: m[k] for k in ("id", "nickname", "user_name")} for m in rows
                if m["nickname"] in names or m["user_name"] in names]

    def info(self, *, user_name: str | None = None, school_id: int | None = None) -> list[Row]:
        """Approved members with school, area and team leader names."""
        out = []
        for m in self.s.members:
            if m["status"] == 0 or (user_name is not None and m["user_name"] != user_name) \
                    or (school_id is not None and m["school_id"] != school_id):
                continue
            school = next((s for s in self.s.schools if s["id"] == m["school_id"]), {})
            area = next((a for a in self.s.areas if a["id"] == school.get("area")), {})
            leader = next((x for x in self.s.members if m["type"] == 3 and x["id"] == m["p_id"]), {})
            out.append({"id": m["id"], "user_name": m["user_name"], "type": m["type"], "status": m["status"],
                        "school_id": m["school_id"], "school_name": school.get("school_name"),
                        "area_name": area.get("area_name"), "subject": m["subject"], "limit": m["limit"],
                        "p_id": m["p_id"], "team_leader_name": leader.get("user_name"), "role": role_name(m["type"])})
        return out

    def update(self, row: Row, values: dict[str, Any]) -> list[Change]:
        """Set changed fields and record them."""
        changes = update_changes("cmf_tp_member", row, values)
        stored = next(m for m in self.s.members if m["id"] == row["id"])
        for c in changes:
            stored[c.field] = row[c.field] = c.after
        self.uow.changes.extend(changes)
        return changes


class FakeSchools(_FakeRepo):
    """In-memory ``SqlSchoolRepository``."""

    def by_name(self, school_name: str) -> list[Row]:
        """Schools with this name."""
        return [s for s in self.s.schools if s["school_name"] == school_name]

    def add(self, area_id: int, school_name: str) -> Row:
        """Insert a school with id = max + 1 and record it."""
        row = {"id": max((s["id"] for s in self.s.schools), default=0) + 1, "area": area_id, "school_name": school_name}
        self.s.schools.append(row)
        self.uow.changes.append(Change(table="cmf_tp_school", key={"id": row["id"]}, after=dict(row)))
        return row


class FakeAreas(_FakeRepo):
    """In-memory ``SqlAreaRepository``."""

    def by_name(self, area_name: str) -> list[Row]:
        """Areas with this name."""
        return [a for a in self.s.areas if a["area_name"] == area_name]


class FakeAdmins(_FakeRepo):
    """In-memory ``SqlAdminRepository``."""

    def is_admin(self, user_id: int) -> bool:
        """True when listed as admin."""
        return user_id in self.s.admins


class FakeMarking(_FakeRepo):
    """In-memory ``SqlMarkingRepository`` (counts come from ``FakeState.problems_left``)."""

    def problems_left(self, user_id: int) -> int:
        """The configured count (default 0)."""
        return self.s.problems_left.get(user_id, 0)


class FakeAudit(_FakeRepo):
    """In-memory ``SqlAuditRepository``."""

    def find(self, idempotency_key: str) -> Row | None:
        """The audit row of this key."""
        return next((a for a in self.s.audit if a["idempotency_key"] == idempotency_key), None)

    def claim(self, entry: Row, actor: str | None = None) -> int:
        """Append an audit row (with its ``actor``); duplicate keys cannot happen single-threaded."""
        self.s.audit.append(dict(entry, id=len(self.s.audit) + 1, actor=actor))
        return len(self.s.audit)

    def complete(self, audit_id: int, values: Row) -> None:
        """Fill in a claimed row."""
        self.s.audit[audit_id - 1].update(values)


class FakeUnitOfWork(AbstractUnitOfWork):
    """In-memory unit of work over a ``FakeState``."""

    def __init__(self, state: FakeState):
        self.state = state
        self.committed = False

    def __enter__(self) -> "FakeUnitOfWork":
        self._snapshot = copy.deepcopy(self.state.__dict__)
        self.changes, self.committed = [], False
        self.members, self.schools, self.areas = FakeMembers(self), FakeSchools(self), FakeAreas(self)
        self.admins, self.marking, self.audit = FakeAdmins(self), FakeMarking(self), FakeAudit(self)
        return self

    def commit(self) -> None:
        """Keep the changes."""
        self.committed = True
        self.state.commits += 1

    def rollback(self) -> None:
        """Restore the state of ``__enter__`` unless committed."""
        if not self.committed:
            commits = self.state.commits
            self.state.__dict__.update(copy.deepcopy(self._snapshot))
            self.state.commits = commits
