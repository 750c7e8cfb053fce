"""Carrying out a system candidate after the loop: its reads already ran; its writes are a plan.

* Another member named as the target of any write: nothing ran, nothing runs (one refusal).
* The write steps whose dry run succeeded are the doable part; the others (refused, a missing
  argument, not allowed) are reported with their reason and never run.
* Verified: the doable part commits atomically through ``Api.call_plan`` with the turn's key (a step
  refused on re-check at commit time -> nothing at all is committed, and the reply says so).
* Not verified (the chooser's pick, an architecture without a verifier) or an operation under an
  approval policy: the doable part goes to the staff queue as ONE approval.
* Verified, and a write waits for the user's yes (``chops.pipeline.confirm``): the doable part is
  described and kept, not committed; with no conversation to ask in, it goes to the staff queue instead.
* Not verified, and a write waits for the user's yes: nothing is offered or queued; the user is asked to say
  again what they want (``UNSURE_OUTCOME``). Staff would otherwise review a change the user never saw, which the
  verifier judged not to be what they asked for (train task 8: "only the desk lamp" queued the water bottle's).

A one-step candidate gets exactly the replies and outcome a single operation always got; a turn of
several steps gets one line per step, and the outcome ``partial`` when some were done (or queued)
and others not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from chops.domain.operations import Operation
from chops.domain.outcomes import Outcome, combined_outcome
from chops.pipeline.confirm import PENDING_OUTCOME, UNSURE_OUTCOME, Confirmation, needs_yes
from chops.pipeline.context import Candidate, Step, TurnContext
from chops.pipeline.replies import (not_done_reply, nothing_changed_reply, operation_reply, other_person_reply,
                                    queued_reply, read_reply, unsure_reply)
from chops.pipeline.tally import commit_money
from chops.records import PARTIAL


class ApprovalQueue(Protocol):
    """Where writes that must not be committed by the agent go (``chops.store.ConversationStore``)."""

    def queue_approval(self, *, nickname: str, operation: str, args: dict[str, Any], idempotency_key: str,
                       dry_run: Any = None, conversation_id: str | None = None, turn_id: int | None = None,
                       further_steps: Sequence[tuple[str, dict[str, Any]]] = ()) -> int: ...

    def needs_approval(self, operation: str) -> bool: ...


@dataclass
class Carried:
    """What carrying out a candidate gave: the reply and the turn's fields (see ``TurnResult``)."""

    reply: str
    outcome: str | None
    committed: bool = False
    queued: bool = False
    approval_id: int | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[str, Any] | None = None  # the change described and waiting for the user's yes


def carry_out(api: Any, approvals: ApprovalQueue, ctx: TurnContext, cand: Candidate, passed: bool, *, key: str,
              turn_key: str, conversation_id: str | None, verified_by: str, lang: str,
              confirmation: Confirmation | None = None) -> Carried:
    """Commit, offer, queue or report ``cand`` (see the module docstring). ``verified_by`` names why an
    unverified plan is queued (``chooser`` or ``unverified``), for the trace; ``confirmation`` (None: no
    store) offers the changes that wait for the user's yes."""
    trace, alone, operations = ctx.trace, len(cand.steps) == 1, api.operations
    reads = [read_reply(operations[s.operation], s.result, s.args, lang) for s in cand.steps if not s.writes]
    writes = [s for s in cand.steps if s.writes]
    doable = [s for s in writes if s.result.outcome.succeeded]
    undone = [s for s in writes if not s.result.outcome.succeeded]
    finals = {id(s): s.result for s in cand.steps}  # each step's latest result (the commit's, once run)

    def done(reply_lines: list[str], outcome: Any, **fields: Any) -> Carried:
        lines = reads + reply_lines + [_undone_line(operations[s.operation], s, alone, lang) for s in undone]
        steps = [{"operation": s.operation, "args": s.args, "outcome": str(finals[id(s)].outcome)} for s in cand.steps]
        return Carried(reply="\n".join(lines), outcome=str(outcome) if outcome is not None else None,
                       steps=steps, **fields)

    if any(s.result.outcome == Outcome.REFUSED_OTHER_PERSON for s in writes):
        return Carried(reply=other_person_reply((cand.result.data or {}).get("people") or [], lang),
                       outcome=str(Outcome.REFUSED_OTHER_PERSON),
                       steps=[{"operation": s.operation, "args": s.args, "outcome": str(s.result.outcome)}
                              for s in cand.steps])
    if not writes or not doable:  # only reads, or nothing that can be done: report what came back
        return done([], _outcome([s.result for s in cand.steps], undone=False))
    pairs = [(operations[s.operation], s.args) for s in doable]
    changes = any(s.result.outcome == Outcome.OK for s in doable)
    names = [s.operation for s in doable]
    wait_for_yes = needs_yes(operations, names, confirmation.mode if confirmation else "pack")
    policy = changes and any(approvals.needs_approval(n) for n in names)  # one look-up of the policies

    def doable_dry() -> Any:  # the doable part's own dry run: the candidate's plan unless some steps were refused
        return cand.plan if not undone else api.call_plan(ctx.nickname, _calls(doable), dry_run=True)

    asking = changes and wait_for_yes and confirmation is not None and conversation_id is not None and not policy
    if asking and passed:
        question, pending = confirmation.offer(ctx, _calls(doable), doable_dry(),
                                               conversation_id=conversation_id, key=key, lang=lang)
        return done([question], PENDING_OUTCOME, pending=pending)
    if asking:  # not verified: the user is asked again, and no one is shown the change
        trace.step("unsure", operations=names, reason=cand.reason)
        return done([unsure_reply(lang)], UNSURE_OUTCOME)
    if changes and (not passed or wait_for_yes or policy):
        approval_id = approvals.queue_approval(
            conversation_id=conversation_id, turn_id=None, nickname=ctx.nickname, operation=doable[0].operation,
            args=doable[0].args, further_steps=_calls(doable[1:]), idempotency_key=key, dry_run=doable_dry())
        trace.step("queue", operation=names[0], operations=names, approval_id=approval_id, idempotency_key=key,
                   reason=verified_by if not passed else "policy")
        trace.emit("commit", {"operation": names[0], "operations": names, "committed": False, "queued": True})
        return done([queued_reply(pairs, lang)], _outcome([s.result for s in doable], bool(undone)), queued=True,
                    approval_id=approval_id)
    if not passed:  # a no-op picked by the chooser changes nothing: report the dry run honestly
        return done([operation_reply(op, s.result, args, lang) for (op, args), s in zip(pairs, doable)],
                    _outcome([s.result for s in doable], bool(undone)))
    # Verified: the same code path for real; preconditions are re-checked inside the one transaction.
    real = api.call_plan(ctx.nickname, _calls(doable), idempotency_key=key, request_id=turn_key)
    for s, result in zip(doable, real.steps):
        finals[id(s)] = result
    trace.step("commit", operation=names[0], args=doable[0].args, outcome=str(real.outcome), message=real.message,
               committed=real.committed, replayed=real.replayed, idempotency_key=key,
               diff=[c.model_dump() for c in real.diff], money=commit_money(real.steps),
               steps=[{"operation": r.operation, "args": s.args, "outcome": str(r.outcome), "message": r.message}
                      for s, r in zip(doable, real.steps)])
    trace.emit("commit", {"operation": names[0], "operations": names, "committed": real.committed, "queued": False,
                          "outcome": str(real.outcome)})
    if not real.committed:  # refused on re-check: the plan rolled back as a whole
        failed = real.steps[-1]
        op, args = pairs[len(real.steps) - 1]
        line = operation_reply(op, failed, args, lang) if alone else nothing_changed_reply(op, failed, args, lang)
        return done([line], failed.outcome)
    lines = [operation_reply(op, r, args, lang) for (op, args), r in zip(pairs, real.steps)]
    return done(lines, _outcome(real.steps, bool(undone)), committed=True)


def _calls(steps: list[Step]) -> list[tuple[str, dict[str, Any]]]:
    return [(s.operation, s.args) for s in steps]


def _undone_line(op: Operation, step: Step, alone: bool, lang: str) -> str:
    # A single refused operation keeps its own reply; in a plan the line names the part not done.
    return (operation_reply if alone else not_done_reply)(op, step.result, step.args, lang)


def _outcome(results: list[Any], undone: bool) -> Outcome | str:
    """The turn's outcome: ``partial`` when a done (or queued) part sits beside an undone one."""
    return PARTIAL if undone else combined_outcome(results)
