"""The outcome of every conversation, computed from what is stored (DESIGN.md: "Outcomes and rates are
computed from the event log, not stored a second time").

The rule (README "Outcomes"), first match wins:

1. ``resolved_by_staff`` — a staff member wrote in the conversation (a ``staff`` event), or decided
   a write the agent had queued for approval (a staff decision turn).
2. Otherwise, if the user waits for a person — the conversation was handed over (a ``state`` event to
   ``waiting`` or ``staff``) or a queued write is still undecided:
   ``waiting`` while it is still open (state ``waiting``/``staff``, or the write pending) and the wait
   began less than ``abandon_after`` ago; ``abandoned`` once it waited that long, or was closed or
   given back to the agent without a staff message.
3. ``failed`` — the last agent answer was not verified (the chooser's pick after every attempt was
   rejected), was a refusal (an outcome ``refused_*``), or got a thumbs down.
4. ``resolved_by_agent`` — anything else.

A conversation still open is classified by what happened so far (``waiting`` is the only class that
can still change by itself). Conversations without any user message (a widget opened and left) and
evaluation runs (channel ``eval``) are not counted. Turns that failed (model or database outage)
store nothing, so they cannot be counted either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

import sqlalchemy as sa

from chops import tables as t

OUTCOMES = ("resolved_by_agent", "resolved_by_staff", "abandoned", "failed", "waiting")
ABANDON_AFTER = timedelta(hours=24)
_OPEN_STATES = ("waiting", "staff")
# Routes answered without the verifier loop, so "not passed" means nothing there: the user is not in the
# system, or asked for a person (the hand-off route).
_UNVERIFIED_ROUTES = ("not_in_system", "handoff")


@dataclass
class TurnFacts:
    """What the analytics need of one stored turn (no trace blob: single JSON fields only)."""

    id: int
    conversation_id: str
    seq: int
    created_at: datetime
    agent: bool  # a user message answered by the agent (a staff decision turn has no user text)
    route: str | None
    operation: str | None
    outcome: str | None
    queued: bool
    passed: bool | None
    latency_s: float | None
    cost_usd: float
    staff_decision: bool
    thumbs: str | None
    question: str | None  # the user's text of a guide-route turn (for guide gaps)


@dataclass
class ConversationFacts:
    """One conversation's state, its events and its turns, and the outcome computed from them."""

    id: str
    created_at: datetime
    state: str
    staff_messages: int = 0
    user_messages: int = 0  # messages stored for staff (kind ``user``)
    handed_over_at: datetime | None = None
    turns: list[TurnFacts] = field(default_factory=list)
    outcome: str = ""

    @property
    def handed_over(self) -> bool:
        """Whether the conversation was ever handed to a person."""
        return self.handed_over_at is not None


def day_range(start: date, end: date) -> tuple[datetime, datetime]:
    """[start 00:00, the day after end 00:00): both days included (UTC, as stored)."""
    return datetime.combine(start, time.min), datetime.combine(end + timedelta(days=1), time.min)


def load(engine: sa.Engine, start: datetime, end: datetime) -> list[ConversationFacts]:
    """The conversations started in [start, end) (not ``eval``) with their facts, in three queries."""
    c, s = t.conversation.c, t.conversation_state.c
    # updated_at >= start is implied by created_at >= start; it lets the query use the updated_at index.
    in_range = sa.and_(c.updated_at >= start, c.created_at >= start, c.created_at < end, c.channel != "eval")
    ids = sa.select(c.id).where(in_range)
    with engine.connect() as conn:
        convs = {row.id: ConversationFacts(id=row.id, created_at=row.created_at, state=row.state or "agent")
                 for row in conn.execute(sa.select(c.id, c.created_at, s.state)
                                         .select_from(t.conversation.outerjoin(t.conversation_state))
                                         .where(in_range).order_by(c.created_at, c.id))}
        for row in conn.execute(_events_query(ids)):
            conv = convs[row.conversation_id]
            conv.staff_messages, conv.user_messages, conv.handed_over_at = row.staff, row.user, row.handed_over_at
        for row in conn.execute(_turns_query(ids)):
            convs[row.conversation_id].turns.append(_turn(row))
    for conv in convs.values():
        if conv.handed_over_at is None and conv.state in _OPEN_STATES:
            conv.handed_over_at = conv.created_at  # a state row without its event: handed over at some point
    return [conv for conv in convs.values() if conv.user_messages or any(tf.agent for tf in conv.turns)]


def _events_query(ids: Any) -> sa.Select:
    e = t.conversation_event.c
    to_state = sa.type_coerce(e.body_json, sa.JSON)["to"].as_string()
    handoff = sa.and_(e.kind == "state", to_state.in_(_OPEN_STATES))
    return (sa.select(e.conversation_id,
                      sa.func.count(sa.case((e.kind == "staff", 1))).label("staff"),
                      sa.func.count(sa.case((e.kind == "user", 1))).label("user"),
                      sa.func.min(sa.case((handoff, e.created_at))).label("handed_over_at"))
            .where(e.conversation_id.in_(ids)).group_by(e.conversation_id))


def _turns_query(ids: Any) -> sa.Select:
    tc, r = t.turn.c, t.turn_rating.c
    trace = sa.type_coerce(tc.trace_json, sa.JSON)
    return (sa.select(tc.id, tc.conversation_id, tc.seq, tc.created_at, (tc.user_text != "").label("agent"),
                      tc.route, tc.operation, tc.outcome, tc.queued,
                      trace["passed"].as_boolean().label("passed"),
                      trace["latency_s"].as_float().label("latency_s"),
                      trace[("totals", "cost_usd")].as_float().label("cost_usd"),
                      trace[("staff_decision", "status")].as_string().label("decision"),
                      r.thumbs, sa.case((tc.route == "guide", tc.user_text)).label("question"))
            .select_from(t.turn.outerjoin(t.turn_rating))
            .where(tc.conversation_id.in_(ids)).order_by(tc.conversation_id, tc.seq))


def _turn(row: Any) -> TurnFacts:
    return TurnFacts(id=row.id, conversation_id=row.conversation_id, seq=row.seq, created_at=row.created_at,
                     agent=bool(row.agent), route=row.route, operation=row.operation, outcome=row.outcome,
                     queued=bool(row.queued), passed=row.passed, latency_s=row.latency_s,
                     cost_usd=float(row.cost_usd or 0.0), staff_decision=row.decision is not None,
                     thumbs=row.thumbs, question=row.question)


def classify(conv: ConversationFacts, now: datetime, abandon_after: timedelta = ABANDON_AFTER) -> str:
    """The conversation's outcome by the module's rule (``now``: naive UTC, as stored)."""
    decisions = sum(tf.staff_decision for tf in conv.turns)
    if conv.staff_messages or decisions:
        return "resolved_by_staff"
    queued = [tf for tf in conv.turns if tf.agent and tf.queued]
    if conv.handed_over or queued:
        began = min(x for x in (conv.handed_over_at, queued[0].created_at if queued else None) if x is not None)
        still_open = conv.state in _OPEN_STATES or (queued and conv.state != "closed")
        return "waiting" if still_open and now - began < abandon_after else "abandoned"
    last = next((tf for tf in reversed(conv.turns) if tf.agent), None)
    if last is not None and (_unverified(last) or (last.outcome or "").startswith("refused_")
                             or last.thumbs == "down"):
        return "failed"
    return "resolved_by_agent"


def _unverified(tf: TurnFacts) -> bool:
    return tf.route not in _UNVERIFIED_ROUTES and not tf.passed


def outcomes(engine: sa.Engine, start: datetime, end: datetime, now: datetime,
             abandon_after: timedelta = ABANDON_AFTER) -> list[ConversationFacts]:
    """``load`` with each conversation's ``outcome`` filled in."""
    convs = load(engine, start, end)
    for conv in convs:
        conv.outcome = classify(conv, now, abandon_after)
    return convs
