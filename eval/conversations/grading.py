"""Grading a conversation the way tau2 does, without tau2: by the database's end state and by what the agent
said.

* Expected end state: a fresh database (the template's copy) with the task's reference ``actions`` replayed
  through the pack's own operations as the task's customer (``user_id`` is never an argument: the acting
  customer is the signed-in user). A refused call, an unknown one (``transfer_to_human_agents``, which
  changes no data) and one that raises are skipped, as tau2 skips a reference call that raises; reads are
  harmless. Then ``pack.export``.
* The agent's end state: its database after the conversation, exported the same way.
* DB check: the two exports are equal as whole documents (every table), numbers within ±0.005 (tau2 hashes
  exact floats; a tolerance keeps a rounding choice of the pack from failing a right answer). A key absent
  on one side equals ``null`` on the other (tau2's model treats absent optional fields as null).
* Communicate check: every string of ``communicate_info`` occurs, case-insensitively, in some agent
  message with its commas removed (so "8276.23" is found in "$8,276.23").
* Reward: 1 when the conversation ended normally (the user stopped, or a transfer) and both checks pass.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eval.conversations.tasks import Action, Task

TOLERANCE = 0.005
DIFF_LIMIT = 12  # differences kept for reading a failure; the count is of all of them
NORMAL_ENDS = ("stop", "transfer", "out_of_scope")  # how a conversation may end and still be graded


class Grade(BaseModel):
    """One conversation's grade: the reward and each of its parts."""

    reward: float
    db_ok: bool
    communicate_ok: bool
    ended_ok: bool
    missing_info: list[str] = Field(default_factory=list)
    differences: int = 0
    diff: list[dict[str, Any]] = Field(default_factory=list, description="the first differences: path, "
                                       "expected, actual")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def compare_states(expected: Any, actual: Any, *, tolerance: float = TOLERANCE,
                   limit: int = DIFF_LIMIT) -> tuple[int, list[dict[str, Any]]]:
    """(how many differences, the first ``limit`` of them as ``{path, expected, actual}``) between two
    exported states; 0 means equal. Lists compare in order (an order's lines, its payment history)."""
    found: list[dict[str, Any]] = []
    count = 0

    def differ(path: str, exp: Any, act: Any) -> None:
        nonlocal count
        count += 1
        if len(found) < limit:
            found.append({"path": path or "/", "expected": _short(exp), "actual": _short(act)})

    def walk(path: str, exp: Any, act: Any) -> None:
        if _number(exp) and _number(act):
            if not math.isclose(exp, act, rel_tol=0.0, abs_tol=tolerance + 1e-9):
                differ(path, exp, act)
        elif isinstance(exp, dict) and isinstance(act, dict):
            for key in sorted(set(exp) | set(act), key=str):
                walk(f"{path}/{key}", exp.get(key), act.get(key))
        elif isinstance(exp, list) and isinstance(act, list):
            if len(exp) != len(act):
                differ(f"{path} (length)", len(exp), len(act))
            for i, (e, a) in enumerate(zip(exp, act)):
                walk(f"{path}/{i}", e, a)
        elif exp != act or type(exp) is not type(act) and not (exp is None or act is None):
            differ(path, exp, act)

    walk("", expected, actual)
    return count, found


def _short(value: Any, size: int = 160) -> Any:
    """A value as a diff summary shows it: scalars as they are, containers as clipped text."""
    if value is None or isinstance(value, (bool, int, float)) or (isinstance(value, str) and len(value) <= size):
        return value
    text = repr(value)
    return text if len(text) <= size else text[:size] + "…"


def communicated(info: Iterable[str], agent_messages: Sequence[str]) -> list[str]:
    """The strings of ``info`` no agent message contains (case-insensitive, the messages' commas removed)."""
    said = [(m or "").lower().replace(",", "") for m in agent_messages]
    return [s for s in info if not any(str(s).lower() in m for m in said)]


def reference_args(action: Action) -> dict[str, Any]:
    """A reference call's arguments as our operations take them: without ``user_id`` (the signed-in user)."""
    return {k: v for k, v in action.arguments.items() if k != "user_id"}


def replay(api: Any, user_id: str, actions: Sequence[Action], pack: Any = None) -> list[dict[str, Any]]:
    """Run the reference ``actions`` through ``api`` as ``user_id``, for real (through ``pack.replay``: an operation
    that takes more than the data set's reference call is given it by its pack); what each did (``skipped`` with
    why, or the outcome)."""
    run = pack.replay if pack is not None else (lambda a, user, name, args: a.call(name, user, args))
    log: list[dict[str, Any]] = []
    for action in actions:
        entry: dict[str, Any] = {"operation": action.name}
        if action.name not in api.operations:
            entry["skipped"] = "unknown operation"  # e.g. transfer_to_human_agents: no data changes
        else:
            try:
                result = run(api, user_id, action.name, reference_args(action))
                entry["outcome"] = str(result.outcome)
            except Exception as exc:  # noqa: BLE001 - tau2 skips a reference call that raises; so do we
                entry["skipped"] = f"raised {type(exc).__name__}: {exc}"
        log.append(entry)
    return log


def expected_state(template: Any, task: Task, user_id: str, scratch_dir: Path | None = None) -> tuple[dict, list]:
    """(the export of a fresh database after the task's reference actions, the replay's log)."""
    with template.fresh(scratch_dir) as engine:
        log = replay(template.pack.api(engine), user_id, task.actions, template.pack)
        return template.pack.export(engine), log


def grade(task: Task, expected: dict, actual: dict, agent_messages: Sequence[str], ended: str | None) -> Grade:
    """The grade of one conversation from the two exported states, the agent's messages and how it ended."""
    count, diff = compare_states(expected, actual)
    missing = communicated(task.communicate_info, agent_messages)
    ended_ok = ended in NORMAL_ENDS
    db_ok, communicate_ok = count == 0, not missing
    return Grade(reward=1.0 if ended_ok and db_ok and communicate_ok else 0.0, db_ok=db_ok,
                 communicate_ok=communicate_ok, ended_ok=ended_ok, missing_info=missing, differences=count,
                 diff=diff)


# --- the agent's calls against the reference (the report's per-operation table) ----------------------------

def _same(a: Any, b: Any) -> bool:
    if _number(a) and _number(b):
        return math.isclose(a, b, rel_tol=0.0, abs_tol=TOLERANCE + 1e-9)
    if isinstance(a, list) and isinstance(b, list):
        # Item lists name a set of items; the tools sort them, so the agent's order does not matter.
        key = str
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(sorted(a, key=key), sorted(b, key=key)))
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


def matches(action: Action, args: dict[str, Any]) -> bool:
    """Whether an agent call's ``args`` are the reference call's (only ``compare_args`` when it names them)."""
    ref = reference_args(action)
    keys = [k for k in action.compare_args if k != "user_id"] if action.compare_args is not None else \
        sorted(set(ref) | {k for k in args if k != "user_id"})
    return all(_same(ref.get(k), args.get(k)) for k in keys)


def judge_calls(calls: Sequence[dict[str, Any]], actions: Sequence[Action]) -> list[dict[str, Any]]:
    """``calls`` (``operation``, ``args``, ``outcome``) each with ``in_reference`` (the reference calls that
    operation) and ``wrong_args`` (it does, but never with these arguments)."""
    out = []
    for call in calls:
        same_op = [a for a in actions if a.name == call["operation"]]
        out.append({**call, "in_reference": bool(same_op),
                    "wrong_args": bool(same_op) and not any(matches(a, call.get("args") or {}) for a in same_op)})
    return out
