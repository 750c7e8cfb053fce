"""Seeded conversations whose outcomes are known, written straight into the tables with SQL (the rows the
conversation service and the desk write), and the figures computed from them by hand.

Range 2026-03-10 .. 2026-03-12, evaluated at NOW = 2026-03-13 12:00 UTC with the default 24 h
abandon window. Conversations (agent turns: route, passed, cited source, latency s, cost USD):

A 03-10 09:00  guide (gap "language", not passed) 3.0/0.01; guide cited 2.0/0.01;
               system ChangeAllTypesUploadLimit ok 4.0/0.02, thumbs up        -> resolved_by_agent
N 03-10 12:00  not_in_system (no verifier) 0.5/0                             -> resolved_by_agent
B 03-10 15:00  basic_info not passed (the chooser's pick) 10.0/0.05           -> failed
C 03-11 08:00  system MakeAllTypesToBeArbiter refused_precondition 3.0/0.01, up -> failed
D 03-11 09:00  guide passed but no source (gap "ceremony") 1.0/0, thumbs down -> failed
E 03-11 10:00  guide not passed (gap "ceremony" reworded) 6.0/0.03; handed over 10:01, claimed,
               a staff message, closed                                        -> resolved_by_staff
H 03-12 11:00  system ChangeAllTypesUploadLimit queued 8.0/0.04; staff approved (decision turn)
                                                                              -> resolved_by_staff
F 03-12 07:00  basic_info 2.5/0.01; handed over 07:02, never answered (29 h)  -> abandoned
G 03-12 20:00  guide cited 5.0/0.02; handed over 20:05 (16 h ago), a user message -> waiting
Not counted: J 03-09 23:59:59 and K 03-13 00:00:00 (outside), L 03-12 23:59:59 (no message),
M 03-11 (channel eval).
"""

from __future__ import annotations

import json
from datetime import datetime

import sqlalchemy as sa

from chops import tables as t

NOW = datetime(2026, 3, 13, 12, 0)
LANGUAGE = "How do I change the language of the interface?"
CEREMONY = "What time does the award ceremony start?"
CEREMONY_AGAIN = "When is the prize-giving ceremony?"

EXPECTED = {
    "from": "2026-03-10", "to": "2026-03-12",
    "conversations": 9,
    "auto_resolution_rate": round(2 / 9, 4),
    "handoff_rate": round(3 / 9, 4),
    "thumbs_up_rate": round(2 / 3, 4),
    "reply_seconds_p50": 3.0,  # 11 answers: 0.5 1 2 2.5 3 [3] 4 5 6 8 10
    "reply_seconds_p95": 9.0,  # rank 0.95 * 10 = 9.5: halfway between 8 and 10
    "cost_per_conversation": round(0.20 / 9, 6),
    "outcomes": {"resolved_by_agent": 2, "resolved_by_staff": 2, "abandoned": 1, "failed": 3, "waiting": 1},
    "ratings": {"up": 2, "down": 1},
    "agent_turns": 11,
    "routes": {"guide": 5, "system": 3, "basic_info": 2, "not_in_system": 1},
    "operations": {"ChangeAllTypesUploadLimit": 2, "MakeAllTypesToBeArbiter": 1},
    "guide_gaps": [{"question": CEREMONY, "count": 2, "examples": [CEREMONY_AGAIN]},
                   {"question": LANGUAGE, "count": 1, "examples": []}],
    "by_day": {"2026-03-10": {"resolved_by_agent": 2, "resolved_by_staff": 0, "abandoned": 0, "failed": 1, "waiting": 0},
               "2026-03-11": {"resolved_by_agent": 0, "resolved_by_staff": 1, "abandoned": 0, "failed": 2, "waiting": 0},
               "2026-03-12": {"resolved_by_agent": 0, "resolved_by_staff": 1, "abandoned": 1, "failed": 0, "waiting": 1}},
}
OUTCOME_OF = {"A": "resolved_by_agent", "N": "resolved_by_agent", "B": "failed", "C": "failed", "D": "failed",
              "E": "resolved_by_staff", "H": "resolved_by_staff", "F": "abandoned", "G": "waiting"}


def trace(passed: bool | None, latency: float, cost: float, source: dict | None = None, route: str = "") -> str:
    """A stored trace with the fields the analytics read (as ``Trace.to_dict`` writes them)."""
    body: dict = {"latency_s": latency, "totals": {"cost_usd": cost, "calls": 3}, "events": [],
                  "steps": [{"iteration": 1, "role": "classifier"}]}
    if passed is not None:
        body["passed"] = passed
    if route == "guide":
        body["steps"].append({"iteration": 1, "role": "executor", "route": "guide", "answer": "…", "source": source})
    return json.dumps(body)


class Seeder:
    """Writes conversations, turns, state rows, events and ratings with plain SQL inserts."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.ids: dict[str, str] = {}
        self.turns: dict[str, list[int]] = {}

    def conversation(self, key: str, at: datetime, nickname: str = "demo_leader", channel: str = "widget") -> str:
        cid = f"conv-{key}"
        with self.engine.begin() as conn:
            conn.execute(t.conversation.insert().values(id=cid, nickname=nickname, created_at=at, updated_at=at,
                                                        channel=channel))
        self.ids[key], self.turns[key] = cid, []
        return cid

    def turn(self, key: str, at: datetime, text: str, route: str | None, *, passed: bool | None = True,
             latency: float = 1.0, cost: float = 0.0, cited: bool = True, operation: str | None = None,
             outcome: str | None = None, queued: bool = False, thumbs: str | None = None) -> int:
        source = {"file": "guide.pdf", "page": 3} if cited else None
        with self.engine.begin() as conn:
            turn_id = conn.execute(t.turn.insert().values(
                conversation_id=self.ids[key], seq=len(self.turns[key]) + 1, created_at=at, user_text=text,
                reply="…", route=route, operation=operation, outcome=outcome, committed=outcome == "ok",
                queued=queued, trace_json=trace(passed, latency, cost, source, route or ""))).inserted_primary_key[0]
            conn.execute(t.conversation.update().where(t.conversation.c.id == self.ids[key]).values(updated_at=at))
            if thumbs:
                conn.execute(t.turn_rating.insert().values(turn_id=turn_id, thumbs=thumbs, rated_at=at))
        self.turns[key].append(turn_id)
        return turn_id

    def staff_decision(self, key: str, at: datetime, status: str = "approved") -> int:
        """The reply-only turn ``console.notify_user`` appends when staff decide a queued write."""
        with self.engine.begin() as conn:
            turn_id = conn.execute(t.turn.insert().values(
                conversation_id=self.ids[key], seq=len(self.turns[key]) + 1, created_at=at, user_text="",
                reply="Staff approved it.", operation="ChangeAllTypesUploadLimit", outcome="ok", committed=True,
                trace_json=json.dumps({"staff_decision": {"approval_id": 1, "status": status,
                                                          "decided_by": "Sam"}}))).inserted_primary_key[0]
        self.turns[key].append(turn_id)
        return turn_id

    def event(self, key: str, at: datetime, kind: str, actor: str, body: dict | None = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(t.conversation_event.insert().values(
                conversation_id=self.ids[key], created_at=at, kind=kind, actor=actor,
                body_json=json.dumps(body) if body is not None else None))

    def state(self, key: str, at: datetime, frm: str, to: str, by: str, staff: str | None = None) -> None:
        """A state change: its event, and the conversation's current state row."""
        self.event(key, at, "state", by, {"from": frm, "to": to})
        s = t.conversation_state
        with self.engine.begin() as conn:
            conn.execute(s.delete().where(s.c.conversation_id == self.ids[key]))
            conn.execute(s.insert().values(conversation_id=self.ids[key], state=to, staff=staff, changed_by=by,
                                           changed_at=at))


def seed(engine: sa.Engine) -> Seeder:
    """Every conversation of the module docstring."""
    s, d = Seeder(engine), lambda day, h, m=0, sec=0: datetime(2026, 3, day, h, m, sec)
    s.conversation("A", d(10, 9))
    s.turn("A", d(10, 9, 0, 10), LANGUAGE, "guide", passed=False, latency=3.0, cost=0.01)
    s.turn("A", d(10, 9, 1), "How do I upload answer sheets?", "guide", latency=2.0, cost=0.01)
    s.turn("A", d(10, 9, 2), "Set my upload limit to 40", "system", latency=4.0, cost=0.02,
           operation="ChangeAllTypesUploadLimit", outcome="ok", thumbs="up")
    s.conversation("N", d(10, 12), nickname="stranger")
    s.turn("N", d(10, 12, 0, 5), "What is my school?", "not_in_system", passed=None, latency=0.5)
    s.conversation("B", d(10, 15))
    s.turn("B", d(10, 15, 0, 5), "Which subject do I mark?", "basic_info", passed=False, latency=10.0, cost=0.05)
    s.conversation("C", d(11, 8))
    s.turn("C", d(11, 8, 0, 5), "Make me an arbiter", "system", latency=3.0, cost=0.01,
           operation="MakeAllTypesToBeArbiter", outcome="refused_precondition", thumbs="up")
    s.conversation("D", d(11, 9))
    s.turn("D", d(11, 9, 0, 10), CEREMONY, "guide", cited=False, latency=1.0, thumbs="down")
    s.conversation("E", d(11, 10))
    s.turn("E", d(11, 10, 0, 10), CEREMONY_AGAIN, "guide", passed=False, latency=6.0, cost=0.03)
    s.state("E", d(11, 10, 1), "agent", "waiting", "demo_leader")
    s.state("E", d(11, 10, 5), "waiting", "staff", "Sam", staff="Sam")
    s.event("E", d(11, 10, 6), "staff", "Sam", {"text": "It starts at 3 pm.", "display_name": "Sam"})
    s.state("E", d(11, 10, 9), "staff", "closed", "Sam")
    s.conversation("H", d(12, 11))
    s.turn("H", d(12, 11, 0, 5), "Set my upload limit to 45", "system", passed=False, latency=8.0, cost=0.04,
           operation="ChangeAllTypesUploadLimit", outcome="ok", queued=True)
    s.staff_decision("H", d(12, 11, 30))
    s.conversation("F", d(12, 7))
    s.turn("F", d(12, 7, 0, 5), "Am I approved?", "basic_info", latency=2.5, cost=0.01)
    s.state("F", d(12, 7, 2), "agent", "waiting", "demo_leader")
    s.conversation("G", d(12, 20))
    s.turn("G", d(12, 20, 0, 5), "How do I upload answer sheets?", "guide", latency=5.0, cost=0.02)
    s.state("G", d(12, 20, 5), "agent", "waiting", "demo_leader")
    s.event("G", d(12, 20, 6), "user", "demo_leader", {"text": "Hello?"})
    # Not counted: outside the range, without a message, an evaluation run.
    for key, at in (("J", d(9, 23, 59, 59)), ("K", d(13, 0))):
        s.conversation(key, at)
        s.turn(key, at, "Am I approved?", "basic_info", latency=1.0)
    s.conversation("L", d(12, 23, 59, 59))
    s.conversation("M", d(11, 13), channel="eval")
    s.turn("M", d(11, 13, 0, 5), "Am I approved?", "basic_info", passed=False, latency=99.0, cost=1.0)
    return s

