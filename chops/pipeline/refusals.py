"""Why the writes of a plan are not run at all, found before its dry run (``Executor.run_plan``).

The request names another member as the target of a write (``chops.pipeline.targets``): every step is refused, the
reads too, since the request is about someone else. A write of products nobody named, a swap the request does not ask
for, one against the price it asks for (``chops.pipeline.kinds``), of a record in a state it does not take, or of
none of the record the request types where a write like it takes that one (``chops.pipeline.states``): nothing to
ask the customer, so the agent redoes the plan with the reason; but a write of a record in a state it does not take
beside writes that may run is left out, the customer told why (``_beside``), and one this conversation already did is
told as done (``_done``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chops.domain.operations import Operation
from chops.domain.outcomes import OperationResult
from chops.domain.system import SystemApi
from chops.i18n import reply_language
from chops.pipeline.context import FINAL, Step, TurnContext
from chops.pipeline.kinds import unasked_refusal
from chops.pipeline.replies import not_done_reply
from chops.pipeline.splitting import clause_of
from chops.pipeline.states import other_record, out_of_state
from chops.pipeline.tally import DONE, done_before
from chops.pipeline.targets import others_named, refusal


def refuse(api: SystemApi, operations: Mapping[str, Operation], choices: Sequence[Operation], ctx: TurnContext,
           steps: list[Step], seen: list[Any]) -> tuple[list[Step], list[str], bool]:
    """Set every step's result where the plan's writes may not run (the module docstring); returns (the steps, less
    the writes ``_beside`` leaves out; the other members the request names, in order; whether the steps were
    refused)."""
    others: list[str] = []
    for s in steps:
        if s.writes:
            others += [who for who in others_named(api, ctx, s.args) if who not in others]
    if others:
        for s in steps:
            s.result = refusal(s.operation, ctx.nickname, others)
        return steps, others, True
    said = clause_of(ctx.text, ctx.message) if ctx.message else ""  # the customer's words the request came from
    rows = [(s, out_of_state(operations[s.operation], s.args, seen, choices, ctx.text, said)
             or other_record(operations[s.operation], s.args, seen, choices, ctx.text),
             unasked_refusal(operations[s.operation], s.args, choices, ctx.text, ctx.user_texts, seen, ctx.message))
            if s.writes else (s, None, None) for s in steps]
    rows = [(s, _done(operations[s.operation], s, state, ctx), why) for s, state, why in rows]
    rows = _beside(operations, ctx, rows)
    first = next((why or state for _, state, why in rows if why or state), None)
    if first is None:
        return [s for s, _, _ in rows], [], False
    # A write of a kind the request does not ask for says so first (the redo is steered to the kind asked); one of a
    # record in a state it does not take says its own record (a payment change of a delivered order proposed for "I
    # also want to return the watch" is told its order's state and redone as the return, not refused as partial).
    for s, state, why in rows:
        other_kind = why is not None and bool((why.data or {}).get("other_kind"))
        s.result = (why if other_kind else state) or first.model_copy(update={"operation": s.operation})
    return [s for s, _, _ in rows], [], True


Row = tuple[Step, OperationResult | None, OperationResult | None]  # a step, its state's refusal, its request's


def _done(op: Operation, step: Step, state: OperationResult | None, ctx: TurnContext) -> OperationResult | None:
    """The state's refusal ``state`` of ``step``, told as what it is where this conversation already did that write
    (``tally.done_before``): the customer asked again, nothing for the model to redo (``FINAL``)."""
    said = done_before(op, step.args, ctx.history) if state is not None else None
    if said is None:
        return state
    return state.model_copy(update={"data": {**(state.data or {}), DONE: said, FINAL: True}})


def _beside(operations: Mapping[str, Operation], ctx: TurnContext, rows: list[Row]) -> list[Row]:
    """``rows`` without the writes of a record in a state they do not take, where the plan's other writes may run and
    no other write is asked for instead (``instead``); the customer is told why first (``told``). Told "cancel all my
    pending orders", the 1.5B added the delivered order's cancel, and the pending orders' cancels were refused with it
    (train task 16)."""
    out = [r for r in rows if r[1] is not None and not (r[1].data or {}).get("instead")]
    if not out or any(why is not None for _, _, why in rows) or not any(
            s.writes and state is None for s, state, _ in rows):
        return rows
    lang = reply_language(ctx.user_texts)
    told = (ctx.trace.info.get("told") or "").split("\n")  # once, though a redo plans the same again
    told += [line for s, state, _ in out if (line := not_done_reply(operations[s.operation], state, s.args, lang))
             not in told]
    ctx.trace.info["told"] = "\n".join(filter(None, told))
    ctx.trace.step("beside", left_out=[{"operation": s.operation, "args": s.args} for s, _, _ in out])
    return [r for r in rows if r not in out]
