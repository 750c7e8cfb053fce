"""Conversation filters of the staff console: by user, route, outcome and date (all optional).

A conversation matches a route or outcome when any of its turns has it. Every value is a bound
parameter; the user filter matches part of the nickname (LIKE with its wildcards escaped).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date, datetime, time, timedelta
from typing import Any

import sqlalchemy as sa

from chops import tables as t
from chops.domain.outcomes import Outcome
from chops.records import PARTIAL

PAGE = 50


class FilterError(ValueError):
    """A filter value the console cannot use (e.g. a malformed date)."""


@dataclass(frozen=True)
class ConversationFilter:
    """What the staff asked for; empty strings mean "any"."""

    user: str = ""
    route: str = ""
    outcome: str = ""
    since: str = ""  # YYYY-MM-DD, first day included (UTC)
    until: str = ""  # YYYY-MM-DD, last day included (UTC)

    @classmethod
    def from_args(cls, args: Any) -> "ConversationFilter":
        """The filter from a query string (unknown keys ignored, values trimmed and capped)."""
        return cls(**{f.name: (args.get(f.name) or "").strip()[:64] for f in fields(cls)})

    def query_args(self) -> dict[str, str]:
        """The non-empty filters, for links that keep them (e.g. the live table's refresh URL)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}

    def _day(self, name: str) -> date | None:
        value = getattr(self, name)
        if not value:
            return None
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise FilterError(f"{name} must be a date like 2026-11-23, not {value!r}") from None

    def where(self) -> Any:
        """The SQL condition on the conversation table."""
        c, turn = t.conversation.c, t.turn.c
        cond = [sa.true()]
        if self.user:
            cond.append(c.nickname.contains(self.user, autoescape=True))
        for column, value in ((turn.route, self.route), (turn.outcome, self.outcome)):
            if value:
                cond.append(sa.exists().where(turn.conversation_id == c.id, column == value))
        if (since := self._day("since")) is not None:
            cond.append(c.updated_at >= datetime.combine(since, time.min))
        if (until := self._day("until")) is not None:
            cond.append(c.created_at < datetime.combine(until + timedelta(days=1), time.min))
        return sa.and_(*cond)


def find_conversations(engine: Any, flt: ConversationFilter, limit: int = PAGE) -> list[dict]:
    """Matching conversations, most recently active first, each with its number of turns."""
    c = t.conversation
    count = sa.select(sa.func.count()).where(t.turn.c.conversation_id == c.c.id).scalar_subquery()
    query = (sa.select(c, count.label("turns")).where(flt.where())
             .order_by(c.c.updated_at.desc(), c.c.id).limit(limit))
    with engine.connect() as conn:
        return [dict(row) for row in conn.execute(query).mappings()]


def choices(engine: Any) -> dict[str, list[str]]:
    """The values the route and outcome selects offer: routes seen in turns, every outcome."""
    with engine.connect() as conn:
        routes = [r for (r,) in conn.execute(sa.select(t.turn.c.route).distinct().where(t.turn.c.route.is_not(None))
                                             .order_by(t.turn.c.route))]
    return {"routes": routes, "outcomes": [o.value for o in Outcome] + [PARTIAL]}
