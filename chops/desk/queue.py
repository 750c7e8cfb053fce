"""The staff queue: conversations in one state, oldest change first, each with how long it has
waited, the user's language and a short summary of what the user wants and what the agent tried,
built from the stored turns and their traces (no model call). Three queries for the whole page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from chops import tables as t
from chops.desk.log import now
from chops.i18n import reply_language
from chops.pipeline.events import Verify, events_of
from chops.pipeline.prompting import clip

QUEUE_STATES = ("waiting", "staff", "closed")
RECENT_TURNS = 3  # turns summarised per conversation
TEXT_CLIP = 160


@dataclass
class QueueItem:
    """One conversation in the queue."""

    conversation_id: str
    nickname: str
    state: str
    staff: str | None
    since: datetime
    wait_seconds: float
    language: str
    wants: list[str] = field(default_factory=list)  # the user's latest requests, newest last
    tried: list[dict[str, Any]] = field(default_factory=list)  # what the agent did about them
    summary: str = ""


def _attempt(row: Any) -> dict[str, Any]:
    """What the agent did in one turn: route, operation, outcome and the verifier's last verdict."""
    trace = json.loads(row["trace_json"]) if row["trace_json"] else {}
    verdicts = events_of(trace, Verify)
    last = verdicts[-1] if verdicts else None
    return {"route": row["route"], "operation": row["operation"], "outcome": row["outcome"],
            "committed": bool(row["committed"]), "queued": bool(row["queued"]),
            "iterations": len(verdicts) or None, "passed": last.passed if last else None,
            "score": last.score if last else None, "reason": last.reason if last else None}


def _describe(a: dict[str, Any]) -> str:
    what = a["operation"] or a["route"] or "answer"
    if a["outcome"]:
        what += f" → {a['outcome']}"
    if a["passed"] is False:
        what += f" (not verified after {a['iterations']} tries)"
    return what


def staff_queue(engine: sa.Engine, state: str = "waiting", limit: int = 100) -> list[QueueItem]:
    """Conversations in ``state``, the longest-waiting first."""
    s, c, tu, e = t.conversation_state, t.conversation, t.turn, t.conversation_event
    query = (sa.select(s.c.conversation_id, s.c.state, s.c.staff, s.c.changed_at, c.c.nickname)
             .join(c, c.c.id == s.c.conversation_id).where(s.c.state == state)
             .order_by(s.c.changed_at, s.c.conversation_id).limit(limit))
    with engine.connect() as conn:
        rows = list(conn.execute(query).mappings())
        ids = [r["conversation_id"] for r in rows]
        ranked = (sa.select(tu.c.conversation_id, tu.c.seq, tu.c.user_text, tu.c.route, tu.c.operation,
                            tu.c.outcome, tu.c.committed, tu.c.queued, tu.c.trace_json,
                            sa.func.row_number().over(partition_by=tu.c.conversation_id,
                                                      order_by=tu.c.seq.desc()).label("rank"))
                  .where(tu.c.conversation_id.in_(ids)).subquery())
        turns = list(conn.execute(sa.select(ranked).where(ranked.c.rank <= RECENT_TURNS)
                                  .order_by(ranked.c.conversation_id, ranked.c.seq)).mappings()) if ids else []
        held = list(conn.execute(sa.select(e.c.conversation_id, e.c.body_json)
                                 .where(e.c.conversation_id.in_(ids), e.c.kind == "user")
                                 .order_by(e.c.id)).mappings()) if ids else []
    at = now()
    items = {r["conversation_id"]: QueueItem(
        conversation_id=r["conversation_id"], nickname=r["nickname"], state=r["state"], staff=r["staff"],
        since=r["changed_at"], wait_seconds=round((at - r["changed_at"]).total_seconds(), 1), language="en")
        for r in rows}
    texts: dict[str, list[str]] = {cid: [] for cid in items}
    for row in turns:
        item = items[row["conversation_id"]]
        if row["user_text"]:
            texts[item.conversation_id].append(row["user_text"])
        if row["route"] != "handoff" and row["user_text"]:  # the hand-off request itself says nothing
            item.wants.append(clip(row["user_text"], TEXT_CLIP))
            item.tried.append(_attempt(row))
    for row in held:
        text = json.loads(row["body_json"] or "{}").get("text") or ""
        texts[row["conversation_id"]].append(text)
        items[row["conversation_id"]].wants.append(clip(text, TEXT_CLIP))
    for cid, item in items.items():
        item.language = reply_language(reversed(texts[cid]))
        item.wants = item.wants[-RECENT_TURNS:]
        tried = "; ".join(_describe(a) for a in item.tried) or "nothing yet"
        item.summary = f"wants: {item.wants[-1] if item.wants else '(not said)'} — agent tried: {tried}"
    return list(items.values())
