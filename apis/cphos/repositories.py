"""SQL repositories over one Core connection. Every statement is built with SQLAlchemy Core
(bound parameters only). Writes record a row-level ``Change`` list in the unit of work.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import sqlalchemy as sa

from apis.cphos import tables as t
from chops.domain.outcomes import Change

ROLE_NAMES = {1: "team leader", 2: "arbiter", 3: "vice team leader"}
CURRENT_EXAM_STATUS = 2  # cmf_tp_exam.status of the exam in progress
UNMARKED = 1  # cmf_tp_correct.status of a marking assignment not yet done
NAME_CHUNK = 400  # names per IN list: two lists per statement stay under SQLite's old 999-parameter limit


def role_name(member_type: int | None) -> str:
    """The role word for a ``cmf_tp_member.type`` value."""
    return ROLE_NAMES.get(member_type or 0, f"unknown type {member_type}")


def update_changes(table: str, row: dict[str, Any], values: dict[str, Any]) -> list[Change]:
    """The changes ``values`` would make to ``row`` (only fields whose value differs)."""
    return [Change(table=table, key={"id": row["id"]}, field=k, before=row[k], after=v)
            for k, v in values.items() if row[k] != v]


def problems_left_query(user_id: Any) -> sa.Select:
    """Unmarked assignments of ``user_id`` in the current exam(s), as upstream defines them."""
    current = sa.select(t.exam.c.id).where(t.exam.c.status == CURRENT_EXAM_STATUS)
    return (sa.select(sa.func.count())
            .select_from(t.correct.join(t.subject, t.subject.c.id == t.correct.c.p_id)
                         .join(t.test_paper, t.test_paper.c.id == t.subject.c.p_id))
            .where(t.correct.c.user_id == user_id, t.correct.c.status == UNMARKED,
                   t.test_paper.c.p_id.in_(current)))


def _exact(rows: list[dict[str, Any]], column: str, value: str) -> list[dict[str, Any]]:
    """Keep exact matches only: MySQL's default collations ignore case and trailing spaces, SQLite
    does not; names "must match exactly" (upstream) and behave the same on every backend."""
    return [r for r in rows if r[column] == value]


class _Repo:
    def __init__(self, conn: sa.Connection, changes: list[Change], lock: bool):
        self.conn, self.changes, self.lock = conn, changes, lock

    def _rows(self, stmt: sa.Select) -> list[dict[str, Any]]:
        return [dict(r._mapping) for r in self.conn.execute(stmt)]


class SqlMemberRepository(_Repo):
    """Members (``cmf_tp_member``)."""

    def _select(self) -> sa.Select:
        stmt = sa.select(t.member)
        return stmt.with_for_update() if self.lock else stmt

    def by_nickname(self, nickname: str) -> list[dict[str, Any]]:
        """Every member row with this nickname (pending ones included), by id."""
        rows = self._rows(self._select().where(t.member.c.nickname == nickname).order_by(t.member.c.id))
        return _exact(rows, "nickname", nickname)

    def active_by_user_name(self, user_name: str) -> list[dict[str, Any]]:
        """Approved members (status != 0) with this exact user name."""
        return _exact(self._rows(sa.select(t.member).where(t.member.c.user_name == user_name,
                                                           t.member.c.status != 0).order_by(t.member.c.id)),
                      "user_name", user_name)

    def named(self, names: Collection[str]) -> list[dict[str, Any]]:
        """``id``, ``nickname`` and ``user_name`` of every member (pending ones included) whose
        nickname or user name is one of ``names``. Two indexed ``IN`` lookups joined by ``UNION``
        (each uses its own index on every backend), in chunks that stay under SQLite's bound
        parameter limit. MySQL's collation may return case variants; callers filter as they need."""
        m, names = t.member, sorted(set(names))
        rows: dict[int, dict[str, Any]] = {}
        for i in range(0, len(names), NAME_CHUNK):
            chunk = names[i:i + NAME_CHUNK]
            cols = (m.c.id, m.c.nickname, m.c.user_name)
            stmt = sa.union(sa.select(*cols).where(m.c.nickname.in_(chunk)),
                            sa.select(*cols).where(m.c.user_name.in_(chunk)))
            rows.update((r["id"], r) for r in self._rows(stmt))
        return [rows[k] for k in sorted(rows)]

    def info(self, *, user_name: str | None = None, school_id: int | None = None) -> list[dict[str, Any]]:
        """Approved members by exact user name or by school, with school, area and team leader names."""
        m, leader = t.member, t.member.alias("leader")
        stmt = (sa.select(m.c.id, m.c.user_name, m.c.type, m.c.status, m.c.school_id, t.school.c.school_name,
                          t.area.c.area_name, m.c.subject, m.c.limit, m.c.p_id,
                          leader.c.user_name.label("team_leader_name"))
                .select_from(m.outerjoin(t.school, t.school.c.id == m.c.school_id)
                             .outerjoin(t.area, t.area.c.id == t.school.c.area)
                             .outerjoin(leader, sa.and_(leader.c.id == m.c.p_id, m.c.type == 3)))
                .where(m.c.status != 0).order_by(m.c.id))
        if user_name is not None:
            stmt = stmt.where(m.c.user_name == user_name)
        if school_id is not None:
            stmt = stmt.where(m.c.school_id == school_id)
        rows = self._rows(stmt)
        if user_name is not None:
            rows = _exact(rows, "user_name", user_name)
        return [dict(r, role=role_name(r["type"])) for r in rows]

    def update(self, row: dict[str, Any], values: dict[str, Any]) -> list[Change]:
        """Set ``values`` on the member ``row``; records and returns the changed fields only."""
        changes = update_changes(t.member.name, row, values)
        if changes:
            self.conn.execute(t.member.update().where(t.member.c.id == row["id"])
                              .values({c.field: c.after for c in changes}))
            row.update({c.field: c.after for c in changes})
            self.changes.extend(changes)
        return changes


class SqlSchoolRepository(_Repo):
    """Schools (``cmf_tp_school``)."""

    def by_name(self, school_name: str) -> list[dict[str, Any]]:
        """Schools with this exact name."""
        rows = self._rows(sa.select(t.school).where(t.school.c.school_name == school_name).order_by(t.school.c.id))
        return _exact(rows, "school_name", school_name)

    def add(self, area_id: int, school_name: str) -> dict[str, Any]:
        """Insert a school with id = max(id) + 1 (upstream's rule) and record the insert."""
        next_id = (self.conn.execute(sa.select(sa.func.max(t.school.c.id))).scalar() or 0) + 1
        row = {"id": next_id, "area": area_id, "school_name": school_name}
        self.conn.execute(t.school.insert().values(row))
        self.changes.append(Change(table=t.school.name, key={"id": next_id}, field=None, before=None, after=row))
        return row


class SqlAreaRepository(_Repo):
    """Areas (``cmf_tp_area``)."""

    def by_name(self, area_name: str) -> list[dict[str, Any]]:
        """Areas with this exact name."""
        return _exact(self._rows(sa.select(t.area).where(t.area.c.area_name == area_name).order_by(t.area.c.id)),
                      "area_name", area_name)


class SqlAdminRepository(_Repo):
    """Admin rights (``cmf_tp_admin``), the only source of them."""

    def is_admin(self, user_id: int) -> bool:
        """True when ``user_id`` is listed in ``cmf_tp_admin``."""
        stmt = sa.select(sa.func.count()).select_from(t.admin).where(t.admin.c.user_id == user_id)
        return bool(self.conn.execute(stmt).scalar())


class SqlMarkingRepository(_Repo):
    """Marking assignments (``cmf_tp_correct`` joined to subject, paper and exam)."""

    def problems_left(self, user_id: int) -> int:
        """Unmarked problems of ``user_id`` in the current exam (0 when no exam is current)."""
        return int(self.conn.execute(problems_left_query(user_id)).scalar() or 0)
