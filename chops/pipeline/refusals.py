"""Why the writes of a plan are not run at all, found before its dry run (``Executor.run_plan``).

The request names another member as the target of a write (``chops.pipeline.targets``): every step is refused, the
reads too, since the request is about someone else. A write of products nobody named, a swap the request does not ask
for, one against the price it asks for (``chops.pipeline.kinds``), of a record in a state it does not take, or of
none of the record the request types where a write like it takes that one (``chops.pipeline.states``): nothing to
ask the customer, so the agent redoes the plan with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chops.domain.operations import Operation
from chops.domain.system import SystemApi
from chops.pipeline.context import Step, TurnContext
from chops.pipeline.kinds import unasked_refusal
from chops.pipeline.states import other_record, out_of_state
from chops.pipeline.targets import others_named, refusal


def refuse(api: SystemApi, operations: Mapping[str, Operation], choices: Sequence[Operation], ctx: TurnContext,
           steps: list[Step], seen: list[Any]) -> tuple[list[str], bool]:
    """Set every step's result where the plan's writes may not run (the module docstring); returns (the other members
    the request names, in order; whether the steps were refused)."""
    others: list[str] = []
    for s in steps:
        if s.writes:
            others += [who for who in others_named(api, ctx, s.args) if who not in others]
    if others:
        for s in steps:
            s.result = refusal(s.operation, ctx.nickname, others)
        return others, True
    states = [(out_of_state(operations[s.operation], s.args, seen, choices, ctx.text)
               or other_record(operations[s.operation], s.args, seen, choices, ctx.text)) if s.writes else None
              for s in steps]
    unasked = next((r for s, state in zip(steps, states) if s.writes and (r := unasked_refusal(
        operations[s.operation], s.args, choices, ctx.text, ctx.user_texts, seen, ctx.message) or state)), None)
    if unasked is None:
        return [], False
    for s, state in zip(steps, states):  # a write of a record in a state it does not take says its own record
        s.result = state or unasked.model_copy(update={"operation": s.operation})
    return [], True
