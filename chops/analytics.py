"""The figures of ``GET /v1/staff/analytics`` and the console dashboard, over conversations started in a
date range, computed from the stored conversations, turns, events and ratings (``chops.outcomes``).

Definitions (README "Analytics"): every rate is over the counted conversations (``chops.outcomes``),
except ``thumbs_up_rate`` (over the rated answers); a rate with nothing to count is ``null``.
``reply_seconds_*`` are the agent's time to answer one message (the turn trace's ``latency_s``),
percentiles by linear interpolation (numpy's default); ``cost_per_conversation`` is the model cost in
USD of all their turns divided by the conversations.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np
import sqlalchemy as sa

from chops.guide_gaps import Embedder, gap_questions, group_gaps
from chops.outcomes import ABANDON_AFTER, OUTCOMES, day_range, outcomes

MAX_DAYS = 366  # one request covers at most a year


class RangeError(ValueError):
    """``from``/``to`` are missing, malformed, reversed or span too long."""


@dataclass(frozen=True)
class DateRange:
    """Both days included (UTC)."""

    start: date
    end: date

    @classmethod
    def parse(cls, start: str | None, end: str | None, today: date) -> "DateRange":
        """From ``YYYY-MM-DD`` strings; a missing ``to`` is today, a missing ``from`` 6 days before ``to``."""
        try:
            last = date.fromisoformat(end) if end else today
            first = date.fromisoformat(start) if start else last - timedelta(days=6)
        except ValueError:
            raise RangeError(f"from and to are dates like 2026-11-23, not {start!r} / {end!r}") from None
        if first > last:
            raise RangeError(f"from ({first}) is after to ({last})")
        if (last - first).days >= MAX_DAYS:
            raise RangeError(f"a range covers at most {MAX_DAYS} days")
        return cls(first, last)

    def days(self) -> list[date]:
        """Every day of the range, in order."""
        return [self.start + timedelta(days=i) for i in range((self.end - self.start).days + 1)]


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _percentile(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 3) if values else None


def compute(engine: sa.Engine, span: DateRange, now: datetime, embedder: Embedder | None = None,
            abandon_after: timedelta = ABANDON_AFTER) -> dict[str, Any]:
    """Every figure for conversations started in ``span`` (``now``: naive UTC); ``embedder`` groups the
    guide gaps (without one, each question is its own group)."""
    convs = outcomes(engine, *day_range(span.start, span.end), now, abandon_after)
    n = len(convs)
    by_outcome = Counter(c.outcome for c in convs)
    turns = [tf for c in convs for tf in c.turns]
    agent = [tf for tf in turns if tf.agent]
    thumbs = Counter(tf.thumbs for tf in agent if tf.thumbs)
    latencies = [tf.latency_s for tf in agent if tf.latency_s is not None]
    by_day = {d.isoformat(): dict.fromkeys(OUTCOMES, 0) for d in span.days()}
    for c in convs:
        by_day[c.created_at.date().isoformat()][c.outcome] += 1
    return {
        "from": span.start.isoformat(),
        "to": span.end.isoformat(),
        "conversations": n,
        "auto_resolution_rate": _rate(by_outcome["resolved_by_agent"], n),
        "handoff_rate": _rate(sum(c.handed_over for c in convs), n),
        "thumbs_up_rate": _rate(thumbs["up"], thumbs["up"] + thumbs["down"]),
        "reply_seconds_p50": _percentile(latencies, 50),
        "reply_seconds_p95": _percentile(latencies, 95),
        "cost_per_conversation": round(sum(tf.cost_usd for tf in turns) / n, 6) if n else None,
        "outcomes": {o: by_outcome[o] for o in OUTCOMES},
        "ratings": {"up": thumbs["up"], "down": thumbs["down"]},
        "agent_turns": len(agent),
        "routes": dict(Counter(tf.route or "none" for tf in agent).most_common()),
        "operations": dict(Counter(tf.operation for tf in agent if tf.operation).most_common()),
        "guide_gaps": group_gaps(gap_questions(engine, agent), embedder),
        "by_day": by_day,
    }


def _cell(text: str) -> str:
    """User text made inert for spreadsheets: a leading = + - @ would start a formula (CSV injection)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def to_csv(figures: dict[str, Any]) -> str:
    """The same figures as CSV rows ``metric,key,value``: one row per number (a guide gap: its question
    as the key, how often it was asked as the value; ``by_day``: ``by_day.<outcome>``, the day as key)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["metric", "key", "value"])
    for name, value in figures.items():
        if name == "guide_gaps":
            writer.writerows([name, _cell(gap["question"]), gap["count"]] for gap in value)
        elif name == "by_day":
            writer.writerows([f"by_day.{o}", day, count] for day, counts in value.items() for o, count in counts.items())
        elif isinstance(value, dict):
            writer.writerows([name, key, v] for key, v in value.items())
        else:
            writer.writerow([name, "", "" if value is None else value])
    return out.getvalue()
