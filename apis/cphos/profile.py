"""The acting user's profile ("basic info"): one query, one row, one pydantic model."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel

from apis.cphos import tables as t
from apis.cphos.repositories import CURRENT_EXAM_STATUS, ROLE_NAMES, problems_left_query, role_name


class Profile(BaseModel):
    """Everything the agent may know about the signed-in user without calling an operation."""

    user_id: int
    nickname: str
    user_name: str
    type: int
    role: str
    status: int
    approved: bool
    school_name: str | None
    area_name: str | None
    subject: int
    limit: int
    team_leader_name: str | None
    problems_left: int
    current_exam: str | None
    is_admin: bool

    @property
    def names(self) -> tuple[str, ...]:
        """The nickname and the real name: a request naming either is about the sender themself."""
        return (self.nickname, self.user_name)

    def describe(self) -> str:
        """A compact plain-text rendering for prompts (one fact per line)."""
        lines = [
            f"Name: {self.user_name} (nickname {self.nickname})",
            self._role_line(),
            "Status: approved" if self.approved else "Status: waiting for approval (application not completed)",
            f"School: {self.school_name or 'unknown'} (area: {self.area_name or 'unknown'})",
            f"Marking subject (viewing problem): {self.subject}",
            f"Upload limit: {self.limit}",
            f"Current exam: {self.current_exam or 'none'}",
            f"Problems left to mark in the current exam: {self.problems_left}",
            f"Admin: {'yes' if self.is_admin else 'no'}",
        ]
        return "\n".join(lines)

    def lookup_data(self) -> dict[str, Any]:
        """The profile's fields (no CPHOS argument takes its value from a look-up)."""
        return self.model_dump()

    def grounding_values(self) -> tuple[str, ...]:
        """None: every CPHOS argument is a value the member states (a name, a limit), never one of theirs."""
        return ()

    def _role_line(self) -> str:
        # Naming the roles the user does NOT have: the 1.5B model read "vice team leader" as
        # "team leader" and answered "am I team leader?" with yes.
        others = [r for r in ROLE_NAMES.values() if r != self.role]
        line = f"Role: {self.role} (not {' and not '.join(others)})" if self.role in ROLE_NAMES.values() \
            else f"Role: {self.role}"
        return line + (f"; the team leader they assist: {self.team_leader_name}" if self.team_leader_name else "")


def profile_query(nickname: str) -> sa.Select:
    """The single SELECT behind ``Api.profile``: member + school + area + team leader, with correlated
    subqueries for problems left, the current exam and admin rights. With duplicate nicknames the
    approved row with the lowest id wins (operations refuse such nicknames outright)."""
    m, leader = t.member, t.member.alias("leader")
    left = problems_left_query(m.c.id).scalar_subquery()
    current = (sa.select(t.exam.c.title).where(t.exam.c.status == CURRENT_EXAM_STATUS)
               .order_by(t.exam.c.id.desc()).limit(1).scalar_subquery())
    is_admin = sa.exists().where(t.admin.c.user_id == m.c.id)
    return (sa.select(m.c.id.label("user_id"), m.c.nickname, m.c.user_name, m.c.type, m.c.status,
                      t.school.c.school_name, t.area.c.area_name, m.c.subject, m.c.limit,
                      leader.c.user_name.label("team_leader_name"), left.label("problems_left"),
                      current.label("current_exam"), is_admin.label("is_admin"))
            .select_from(m.outerjoin(t.school, t.school.c.id == m.c.school_id)
                         .outerjoin(t.area, t.area.c.id == t.school.c.area)
                         .outerjoin(leader, sa.and_(leader.c.id == m.c.p_id, m.c.type == 3)))
            .where(m.c.nickname == nickname)
            .order_by(sa.case((m.c.status != 0, 0), else_=1), m.c.id)
            .limit(1))


def load_profile(conn: sa.Connection, nickname: str) -> Profile | None:
    """Run the profile query; ``None`` = the nickname is not in the system."""
    row = conn.execute(profile_query(nickname)).mappings().first()
    if row is None:
        return None
    d = dict(row)
    d["problems_left"], d["is_admin"] = int(d["problems_left"] or 0), bool(d["is_admin"])
    return Profile(**d, role=role_name(d["type"]), approved=d["status"] != 0)
