"""Put back what this conversation changed: "I regret it, please change my default address back to what it was".

The values a change replaced are in its commit's diff (``Change.before``), so the call that undoes it is the committed
call with those values: no model need remember them (asked so, the 1.5B said the address had already been changed
back, and nothing was: train task 22). ``undoing`` finds it where the request asks for something back ("change …
back", "back to what it was", "undo", "revert", 改回) and names the change by its words (the words of its operation's
title the other committed changes' titles lack); it is then planned like any write (dry run, verifier, the
customer's yes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from chops.domain.operations import Operation
from chops.domain.outcomes import OperationResult, Outcome
from chops.pipeline.context import Step, TurnContext
from chops.pipeline.lookups import conversation_lookups
from chops.pipeline.tally import commits
from chops.pipeline.walk import mentions
from chops.records import TurnRecord

_BACK = re.compile(r"\b(?:change|set|put|switch|move|turn|make)\b[^.?!]{0,40}?\bback\b(?!\s+(?:to me|up))"
                   r"|\bback to (?:what|how|the (?:old|original|previous|way))|\bundo\b|\brevert|改回|恢复|撤销",
                   re.IGNORECASE)


def undoing(ctx: TurnContext,
            operations: Mapping[str, Operation]) -> tuple[tuple[str, dict[str, Any]], list[Step]] | None:
    """The call that puts back the committed change of this conversation the request asks to undo (module docstring),
    and the look-ups to ground it by: the conversation's, and the values its commit replaced (as a record read; the
    profile now holds the new ones); or None."""
    if not _BACK.search(ctx.text):
        return None
    done = [c for c in _committed(ctx.history, operations) if c[2]]
    if not done:
        return None
    titles = {name: _words(operations[name]) for name, _, _ in done}

    def named(name: str) -> int:
        others = set().union(*(w for n, w in titles.items() if n != name))
        return sum(mentions(ctx.text, w) for w in titles[name] - others)

    name, args, before = max(reversed(done), key=lambda c: named(c[0]))  # the newest of the most named
    replaced = Step(operation=name, proposed_args={}, args={}, description="the values the change replaced",
                    result=OperationResult(operation=name, outcome=Outcome.OK, message="the values it replaced",
                                           data=before))
    return (name, {**args, **before}), [*conversation_lookups(ctx), replaced]


def _committed(history: Sequence[TurnRecord],
               operations: Mapping[str, Operation]) -> Iterable[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(operation, arguments, the values its commit replaced, by argument) of each write the conversation committed,
    oldest first. A change of the commit's diff is a step's where the step's arguments hold a value of the changed
    row's key (an order's id); else, of the one step whose operation names no record (the customer's own row)."""
    for commit in commits(turn.trace for turn in history):
        steps = [(s["operation"], s.get("args") or {}) for s in commit.get("steps") or []
                 if s.get("operation") in operations and operations[s["operation"]].writes]
        for name, args in steps:
            fields = set(operations[name].arg_names())
            before: dict[str, Any] = {}
            for change in commit.get("diff") or []:
                keys = {str(v) for v in (change.get("key") or {}).values()}
                owners = [n for n, a in steps if keys & {str(v) for v in a.values()}]
                mine = name in owners if owners else not operations[name].choice_states()
                if mine and change.get("field") in fields:
                    before[change["field"]] = change.get("before")
            yield name, args, before


def _words(op: Operation) -> set[str]:
    """The words of four letters or more of the operation's title ("change your default address")."""
    return {w for w in re.findall(r"\w+", (op.title or op.name.replace("_", " ")).lower()) if len(w) >= 4}
