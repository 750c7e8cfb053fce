"""EcoAssistant's assistant hierarchy in the loop: which attempts move the next iteration one tier up.

Iteration 1 asks every role at its first (cheapest) tier. An attempt is rejected, and the next
iteration asks one tier up (staying at the last), when the verifier scores it below the threshold,
when a reply is twice invalid for its schema, or when a deterministic check fails:

* grounding: the executor wrote argument values the sender never wrote (``Candidate.dropped``);
* refusal: the platform refused the proposed operation for a reason other than a missing argument
  (asking back is what a request without the value calls for; a wrong value, a precondition, a
  permission or another person's account usually means a cheap model picked the wrong call);
* no source: a guide answer citing no excerpt (the model said the guides do not cover it).

A failed check rejects an attempt without asking the verifier only while a stronger tier is left and
an iteration remains for it; at the last tier the verifier judges it as before, so a single-model
deployment behaves exactly as without tiers, and a correct refusal by the cheap tier costs one
confirming attempt by the stronger one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chops.domain.operations import Operation
from chops.domain.outcomes import Outcome
from chops.pipeline.context import Candidate, Step, TurnContext, as_told
from chops.pipeline.kinds import names_write
from chops.pipeline.prompting import fragment
from chops.pipeline.walk import made_of
from chops.records import TurnRecord

# Refusals a request may well have asked for: the sender gave no value, so we ask back.
_ASKED_FOR = {Outcome.REFUSED_MISSING_ARGS}
LOOP_ROLES = ("classifier", "executor", "verifier")


def failed_check(cand: Candidate) -> tuple[str, str] | None:
    """(check name, reason for the feedback) of the first deterministic check ``cand`` fails, or None."""
    if cand.dropped:
        return "grounding", fragment("check_grounding", values=", ".join(cand.dropped))
    if cand.result is not None and not Outcome(cand.result.outcome).succeeded \
            and cand.result.outcome not in _ASKED_FOR:
        return "refusal", fragment("check_refusal", outcome=cand.outcome)
    if cand.route == "guide" and cand.source is None:
        return "no_source", fragment("check_no_source")
    return None


# Refusals that say the plan's own choice was wrong for what the look-ups showed (a status, a value).
_REDONE = {Outcome.REFUSED_INVALID_ARG, Outcome.REFUSED_PRECONDITION}


def refused_plan(cand: Candidate, history: Sequence[TurnRecord] = (), looks_up: bool = False) -> Step | None:
    """The step to redo ``cand`` for, once, or None: a write planned from look-ups that the platform refused as
    invalid or against a precondition, or one refused so in an earlier turn of the ``history`` already
    (``refused_before``). With the order in view the 1.5B model still proposed an item change on a delivered order, or
    the same item twice, and the customer was told "I couldn't do that". Applies at every tier (a retry, not an
    escalation). So too a plan from look-ups whose every write changes nothing: asked to change an order's items and
    its address, the 1.5B proposed another order's address change to the address it already had, the customer heard
    "Done: nothing needed to change", and the item change was never made (train task 72). In a system of look-ups
    (``looks_up``) a no-op plan made without one counts too: with the orders read in the turn before, or with none
    read, the 1.5B proposed an address change to the address already there, and the rest of the request was never
    done (train task 110). A system without look-ups keeps its no-op answers ("your upload limit already is 20")."""
    writes = [s for s in cand.steps if s.writes and s.result is not None]
    if (looks_up or cand.lookups) and writes and all(s.result.outcome == Outcome.OK_NOOP for s in writes):
        return writes[0]
    return next((s for s in writes if Outcome(s.result.outcome) in _REDONE and not as_told(s)
                 and (cand.lookups or refused_before(history, s) or _noted(s, "fallback") or _noted(s, "instead"))),
                None)


def _noted(step: Step, key: str) -> Any:
    """What the refusal of ``step`` notes under ``key``: ``fallback``, the request the customer gave for the case where
    their condition fails (``fallbacks.fallback``); ``instead``, the write the request named too that takes the record
    in the state it was found in (``states.out_of_state``: told "cancel or return everything", with no order read, the
    1.5B proposed each delivered order's cancel and the customer heard "I couldn't do that", train task 13);
    ``other_kind``, a write of another kind than the request's (``kinds``)."""
    return (step.result.data or {}).get(key) if step.result is not None else None


def redo(ctx: TurnContext, cand: Candidate, refused: Step, operations: Mapping[str, Operation]) -> None:
    """Reject ``cand`` (``refused_plan``) without the verifier, once a turn, with the refusal as feedback. An
    operation refused against a precondition, or refused with the same arguments in an earlier turn
    (``refused_before``), is not offered to the retry: told that order #W… is delivered, the 1.5B model proposed
    the same item change again. Nor is a swap where another kind of change was asked for (``kinds.unasked_swap``):
    told "I also want to return the smart watch", the 1.5B proposed a skateboard's exchange twice (train task 91). A
    refusal against a precondition that the redo only answers about is told in the platform's words (``ctx.refused``),
    not the model's. Where
    the customer said what to do should their condition fail ("if it's under $200 exchange it; if not, return it"),
    that request replaces the turn's (the whole message stays ``ctx.message``) and the swap is barred: told the
    refusal and those words, the 1.5B wrote the refusal back and never proposed the return (train task 89); unless
    that request is a swap too (``again``: "then only exchange the thermostat"). So too a write that changed nothing
    where the request does not name it (``kinds.names_write``; ``operations``: the pack's): asked to "make the
    skateboard the 28 inch one" in a pending order, the 1.5B proposed the order's address change to the address it
    had, twice, and the customer heard "Done: nothing needed to change" (own5)."""
    ctx.refusal_redone = True
    if isinstance(refused.result.data, dict) and refused.result.data.get("asked"):  # a check's (``kinds``) words
        ctx.refusals.append(refused.result.message or "")
    noop = refused.result.outcome == Outcome.OK_NOOP
    cand.reason = fragment("check_noop_plan" if noop else "check_refused_plan", message=refused.result.message)
    said = _noted(refused, "fallback")
    if refused.result.outcome == Outcome.REFUSED_PRECONDITION or refused_before(ctx.history, refused) \
            or _noted(refused, "other_kind") or (said and not _noted(refused, "again")) \
            or (noop and not names_write(operations[refused.operation], ctx.text, operations.values())):
        ctx.barred.add(refused.operation)
    # The write the request named for the state the record is in ("cancel or return" of a delivered order): told why
    # the cancel was refused, the 1.5B wrote the refusal back as its answer (train task 14), so the redo must propose it.
    ctx.instead = _noted(refused, "instead")
    if refused.result.outcome == Outcome.REFUSED_PRECONDITION and not said and not ctx.instead:
        # Redone for another write; an answer instead says why this one was refused in the platform's words: told a
        # refund cannot go to the card asked for, the 1.5B answered that the refund of a camera nobody named would
        # go to the gift card, and the verifier passed it (train task 83).
        ctx.refused = cand
    if said and said not in ctx.text:  # the customer's own request for this case is carried out ("if not, return it")
        ctx.message, ctx.text = ctx.message or ctx.text, said
        # and the one a value asked for completes next turn (``agenda.plan``; as it is, with the answer, where the
        # swap is proposed and refused again): with the request before it, or the fallback alone, the cancel's reason
        # was asked for again and again (train task 88).
        ctx.trace.info["request"] = said
        # and the reply says why first: what the customer asked about ("the cheapest keyboard … costs $226.11")
        why = refused.result.message.split("; for that case")[0]
        ctx.trace.info["told"] = f"{why[0].upper()}{why[1:]}."
    ctx.add_feedback(cand)
    ctx.trace.step("redo", operation=refused.operation, outcome=refused.outcome, barred=sorted(ctx.barred),
                   **({"fallback": said} if said else {}), **({"instead": ctx.instead} if ctx.instead else {}))


def refused_before(history: Sequence[TurnRecord], step: Step) -> bool:
    """Whether an earlier turn ended in the platform refusing ``step``'s very call (its operation and arguments) for
    a reason other than a missing value: the state it was refused for has not changed, so proposing it again is
    the model's habit, not the customer's request (train task 15: a payment change the order already had, refused
    turn after turn while the customer asked for a size change)."""
    return any(t.operation == step.operation and t.args == step.args and t.outcome is not None
               and t.outcome.startswith("refused") and t.outcome not in _ASKED_FOR for t in history)


def top_tier(llm, roles: tuple[str, ...] = LOOP_ROLES) -> int:
    """The highest tier index any loop role has (0 without a hierarchy)."""
    return max(llm.tier_count(role) for role in roles) - 1


def written_back(cand: Candidate, refusals: Sequence[str]) -> bool:
    """Whether ``cand`` answers with a check's refusal the redo was told (``TurnContext.refusals``: what the request
    asked for, in words to the model; the platform's own refusals are the customer's to hear), in its words: told "you
    asked to know something, not for other items in place of these", the 1.5B answered the customer with it four
    times, the verifier scored each 1, and the chooser sent it (own7)."""
    told = " ".join(r for r in refusals if r)
    return bool(cand.operation is None and cand.answer and told) and made_of(cand.answer, told)
