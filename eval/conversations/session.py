"""ONE conversation of the eval: a fresh database, the pack's API on it, one ``ConversationService`` with the
customer signed in, the agent's greeting first, then customer and agent in turns until the customer ends,
``max_turns`` is reached or the agent hands the conversation to a person; then its end state is graded.

Everything the conversation produces goes into one JSON-able record (a line of ``results.jsonl``).
"""

from __future__ import annotations

import json
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.conversations.grading import expected_state, grade, judge_calls
from eval.conversations.tasks import Task

FALLBACK_GREETING = "Hi! How can I help you today?"  # tau2's opening line, for a service without its own
# Turn outcomes that are not a call reaching the system: a change described and waiting for the yes, or one
# the customer declined or let lapse (its call is counted on the turn that commits or refuses it), or one not
# verified that the customer is asked to say again.
NOT_CALLED = ("pending_confirmation", "declined", "lapsed", "unsure")
OK_OUTCOMES = ("ok", "ok_noop")

ServiceFactory = Callable[[Any, Any], Any]  # (engine, api) -> a ConversationService over that database
UserFactory = Callable[[Task], Any]  # task -> a fresh ScriptedUser or LLMUser


@dataclass
class Wiring:
    """What every conversation of a run shares."""

    template: Any  # eval.conversations.database.PackTemplate (its ``pack`` gives api and export)
    make_service: ServiceFactory
    make_user: UserFactory
    customer_of: Callable[[Task], str]  # the signed-in customer of a task
    scratch_dir: Path
    end_states_dir: Path | None = None
    end_states: str = "first"  # first (trial 1 only) | all | none


def opening_line(service: Any, lang: str = "en") -> str:
    """The agent's greeting: the service's own (``ConversationService.greeting``, the catalog's line), else
    tau2's."""
    greet = getattr(service, "greeting", None)
    return greet(lang) if callable(greet) else FALLBACK_GREETING


def _dump(value: Any) -> Any:
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def turn_calls(result: Any) -> list[dict[str, Any]]:
    """The operation calls of one turn that reached the system: the look-ups the executor made, and the
    call(s) the turn ran (a committed or refused write, a read answered) — not a change only described."""
    trace = result.trace or {}
    calls = [{"operation": look["operation"], "args": look.get("args") or {}, "outcome": look.get("outcome"),
              "lookup": True}
             for step in trace.get("steps") or [] for look in step.get("lookups") or []]
    if result.outcome in NOT_CALLED or trace.get("pending"):
        return calls
    steps = result.steps or ([{"operation": result.operation, "args": result.args, "outcome": result.outcome}]
                             if result.operation else [])
    return calls + [{"operation": s["operation"], "args": s.get("args") or {}, "outcome": s.get("outcome"),
                     "lookup": False} for s in steps]


def turn_record(user_text: str, result: Any, wall_s: float) -> dict[str, Any]:
    """What the record keeps of one turn (its whole trace included, for reading a failure)."""
    trace = _dump(result.trace) or {}
    totals = trace.get("totals") or {}
    return {
        "user": user_text, "reply": result.reply, "route": result.route, "operation": result.operation,
        "operations": [s["operation"] for s in result.steps] or ([result.operation] if result.operation else []),
        "outcome": result.outcome, "outcomes": [s.get("outcome") for s in result.steps],
        "committed": result.committed, "queued": result.queued, "pending": bool(trace.get("pending")),
        # What the commit changed: a verified no-op commits no change, and so asks no yes.
        "changed": any(s.get("diff") for s in trace.get("steps") or [] if s.get("role") == "commit"),
        "confirmed": trace.get("confirmed") is True, "calls": turn_calls(result),
        "model_calls": totals.get("calls", 0), "cost_usd": result.cost_usd, "latency_s": result.latency_s,
        "wall_s": round(wall_s, 4), "iterations": result.iterations, "steps": len(trace.get("steps") or []),
        "error": result.error, "trace": trace,
    }


def end_state_path(directory: Path, task_id: str, trial: int) -> Path:
    """``<task id>.json`` for the first trial, ``<task id>.trial<k>.json`` for the others."""
    safe = re.sub(r"[^\w.#-]", "_", task_id)
    return directory / (f"{safe}.json" if trial == 1 else f"{safe}.trial{trial}.json")


def run_conversation(task: Task, trial: int, wiring: Wiring) -> dict[str, Any]:
    """Run and grade one (task, trial); an exception is a failed record with its traceback, except the
    run-stopping ``EvalAbort`` (a model configuration error: every further task would fail the same way)."""
    from chops.llm import LLMError
    from eval.casework import FATAL_LLM_CODES, EvalAbort

    rec: dict[str, Any] = {"key": f"{task.id}#{trial}", "task_id": task.id, "trial": trial, "error": None,
                           "reward": 0.0, "passed": False, "transcript": [], "turns": [], "ended": None}
    t0 = time.perf_counter()
    user = None
    try:
        rec["user_id"] = customer = wiring.customer_of(task)
        user = wiring.make_user(task)
        rec["user_kind"] = type(user).__name__
        actual = _converse(task, customer, user, wiring, rec)
        expected, rec["reference_replay"] = expected_state(wiring.template, task, customer, wiring.scratch_dir)
        agent_messages = [m["text"] for m in rec["transcript"] if m["role"] == "agent"]
        g = grade(task, expected, actual, agent_messages, rec["ended"])
        rec.update(grade=g.model_dump(), reward=g.reward, passed=g.reward == 1.0)
        rec["calls"] = judge_calls([c for t in rec["turns"] for c in t["calls"]], task.actions)
        _save_end_state(wiring, task.id, trial, actual)
    except EvalAbort:
        raise
    except LLMError as exc:
        if getattr(exc, "code", None) in FATAL_LLM_CODES:
            raise EvalAbort(f"model configuration error, run stopped: {exc}") from exc
        rec.update(error=traceback.format_exc(), error_code=getattr(exc, "code", None) or "llm_error")
    except Exception:  # noqa: BLE001 - a crash in one task is a failed task, never a dead run
        rec.update(error=traceback.format_exc(), error_code="crash")
    rec.setdefault("calls", [c for t in rec["turns"] for c in t["calls"]])
    turns = rec["turns"]
    rec.update(n_turns=len(turns), model_calls=sum(t["model_calls"] for t in turns),
               cost_usd=round(sum(t["cost_usd"] or 0.0 for t in turns), 6),
               agent_latency_s=round(sum(t["latency_s"] or 0.0 for t in turns), 4),
               steps=sum(t["steps"] for t in turns), **user_model_use(user),
               user_rules=[source for source, _ in getattr(user, "said", [])] or None,
               time_s=round(time.perf_counter() - t0, 4))
    return rec


def user_model_use(user: Any) -> dict[str, Any]:
    """What the simulated customer cost in model calls (an LLM user; a scripted one makes none)."""
    calls = getattr(user, "calls", None) or []
    return {"user_calls": len(calls), "user_tokens_in": sum(c.get("tokens_in") or 0 for c in calls),
            "user_tokens_out": sum(c.get("tokens_out") or 0 for c in calls),
            "user_latency_s": round(sum(c.get("latency_s") or 0.0 for c in calls), 4)}


def _converse(task: Task, customer: str, user: Any, wiring: Wiring, rec: dict[str, Any]) -> dict:
    """The conversation itself, recorded into ``rec`` as it goes (a crash keeps what happened); returns the
    exported end state of its database."""
    transcript, turns = rec["transcript"], rec["turns"]
    with wiring.template.fresh(wiring.scratch_dir) as engine:
        service = wiring.make_service(engine, wiring.template.pack.api(engine))
        conversation_id = service.start(customer, "eval")
        rec["conversation_id"] = conversation_id
        greeting = opening_line(service)
        transcript.append({"role": "agent", "text": greeting})
        text, ended = user.opening(greeting)
        while True:
            if text:
                transcript.append({"role": "user", "text": text})
            if ended:  # the customer's last message needs no answer (tau2 ends on ###STOP### at once)
                rec["ended"] = user.end_reason
                break
            t_turn = time.perf_counter()
            result = service.run_turn(conversation_id, customer, text).result
            turns.append(turn_record(text, result, time.perf_counter() - t_turn))
            transcript.append({"role": "agent", "text": result.reply})
            if result.route == "handoff":  # a person takes over: the agent's part is done
                rec["ended"] = "transfer"
                break
            text, ended = user.reply(result.reply)
        return wiring.template.pack.export(engine)


def _save_end_state(wiring: Wiring, task_id: str, trial: int, state: dict) -> None:
    if wiring.end_states_dir is None or wiring.end_states == "none" or (wiring.end_states == "first" and trial != 1):
        return
    wiring.end_states_dir.mkdir(parents=True, exist_ok=True)
    path = end_state_path(wiring.end_states_dir, task_id, trial)
    tmp = path.with_suffix(".tmp")
    # ``chops db export``'s layout (db.json's, for retail), so the two can be diffed line by line.
    tmp.write_text(json.dumps(state, indent=4, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
