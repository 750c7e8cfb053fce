"""Confirmation before consequential writes: describe the verified change, keep it, and let the user's next
message decide.

* Offer: a verified plan whose writes need the user's "yes" (the pack marks them ``confirm``; or every
  write, or none: ``CHOPS_CONFIRM_WRITES``) is not committed. Its dry run's diff is described to the user
  in their language, and the exact plan is kept (``chops.pending``) with the idempotency key its commit will
  use and an expiry.
* Decide: the next message is read by the model — yes, no, or something else, in any wording or language
  (no keyword list). Yes commits exactly that plan after a fresh dry run against the current state: when
  the state moved (another diff), the new change is described and asked about again; when it is refused
  now, nothing is written and the user is told why. No drops it. Anything else drops it too, and the
  message is handled as the new request it is; so is a yes with a condition or another choice ("yes, but
  refund it to my other card": the words are the language's data, ``chops.domain.words.qualified``). A reply
  that is neither (the reason said again) is asked about once more; a second such reply in a row, or one that
  names a change, is handled as a new request. A yes after the expiry commits nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from chops.domain.operations import Operation
from chops.domain.outcomes import Change, Outcome, PlanResult
from chops.domain.system import SystemApi
from chops.domain.words import qualified
from chops.pipeline.context import TurnContext
from chops.pipeline.prompting import messages
from chops.pipeline.replies import change_lines, confirm_reply, operation_reply, pending_reply, said_as
from chops.pipeline.tally import commit_money

PENDING_OUTCOME = "pending_confirmation"  # the turn outcome of a change described and waiting for the yes
UNSURE_OUTCOME = "unsure"  # a change that waits for a yes, not verified: the user is asked to say it again


class ConfirmationAnswer(BaseModel):
    """The user's answer to "shall I go ahead?"."""

    answer: Literal["yes_go_ahead", "no_do_not", "unclear", "something_else"]


class PendingStore(Protocol):
    """Where described changes wait (``chops.pending.PendingChanges``)."""

    def offer(self, *, conversation_id: str, nickname: str, steps: list[tuple[str, dict[str, Any]]],
              diff: list[dict[str, Any]], description: str, idempotency_key: str) -> Any: ...

    def open_for(self, conversation_id: str) -> Any | None: ...

    def close(self, change_id: int, state: str) -> bool: ...


@dataclass
class Decided:
    """A turn the pending change decided: the reply and the turn's fields."""

    reply: str
    fields: dict[str, Any] = field(default_factory=dict)


def needs_yes(operations: Mapping[str, Operation], names: Sequence[str], mode: str) -> bool:
    """True when a plan of writes ``names`` waits for the user's yes under ``mode`` (pack / all / none)."""
    if mode == "none":
        return False
    return mode == "all" or any(operations[n].confirm for n in names)


class Confirmation:
    """Offers changes for the user's yes and decides them on the next message."""

    def __init__(self, llm: Any, api: SystemApi, store: PendingStore, mode: str = "pack") -> None:
        self.llm, self.api, self.store, self.mode = llm, api, store, mode

    def needed(self, names: Sequence[str]) -> bool:
        """Whether a verified plan of writes ``names`` must wait for the yes."""
        return needs_yes(self.api.operations, names, self.mode)

    def offer(self, ctx: TurnContext, steps: list[tuple[str, dict[str, Any]]], dry: PlanResult, *,
              conversation_id: str, key: str, lang: str) -> tuple[str, dict[str, Any]]:
        """Keep the plan and return (the question to the user, the pending change as the turn shows it);
        ``dry``: the plan's dry run (its changes, and each step's message)."""
        pairs = [(self.api.operations[name], args) for name, args in steps]
        diff: list[Change] = dry.diff
        description = change_lines(pairs, diff, lang, [said_as(r, lang) for r in dry.steps or [dry]])
        kept = self.store.offer(conversation_id=conversation_id, nickname=ctx.nickname, steps=steps,
                                diff=[c.model_dump(mode="json") for c in diff], description=description,
                                idempotency_key=key)
        ctx.trace.step("confirm_offer", pending=kept.id, operations=[name for name, _ in steps], idempotency_key=key)
        return confirm_reply(description, lang), _shown(kept)

    def decide(self, ctx: TurnContext, conversation_id: str, *, turn_key: str, key: str,
               lang: str) -> Decided | None:
        """The turn, when the conversation's open change decides it; None when there is none or the message
        is something else (the change is then dropped and the message handled as a new request)."""
        change = self.store.open_for(conversation_id)
        if change is None:
            return None
        msgs = messages("pipeline_confirm", question=change.description, request=ctx.text)
        out, step = ctx.trace.call("classifier", lambda lg: self.llm.structured(
            "classifier", msgs, ConfirmationAnswer, ledger=lg), route="confirm", pending=change.id)
        step["answer"] = out.answer
        qualifiers = qualified(ctx.text) if out.answer == "yes_go_ahead" else []
        if qualifiers:
            # A yes with a condition or another choice ("yes — but refund it to my other method", "yes, confirmed —
            # cancel that other customer's order") agrees to no change as described: the message is the request it is.
            step.update(answer="something_else", qualified=qualifiers)
            out.answer = "something_else"
        if out.answer == "unclear" and (_unclear_before(ctx, change.id) or any(
                op.writes and op.named_in(ctx.text) for op in self.api.operations.values())):
            # Asked twice, still no yes, or a change named ("Hold on, not yet. I also want to return the smart watch"):
            # the message is taken as the request it is, not met with the same question again ("That's not the right
            # one. Please look again at the hose …" was asked about 17 times: train task 29; the watch was never
            # returned: train task 91).
            step["answer"] = out.answer = "something_else"
        if out.answer == "something_else":
            self.store.close(change.id, "dropped")
            ctx.dropped = list(change.steps)  # "I also want …": the new request's call may add to it (together)
            return None
        fields = {"route": "system", "operation": change.steps[0][0], "args": change.steps[0][1]}
        if out.answer == "no_do_not":
            self.store.close(change.id, "declined")
            return Decided(pending_reply("declined", lang), {**fields, "outcome": "declined"})
        if change.lapsed():
            self.store.close(change.id, "lapsed")
            return Decided(pending_reply("lapsed", lang), {**fields, "outcome": "lapsed"})
        if out.answer == "unclear":  # neither yes nor no ("I ordered it by mistake"): the same change, asked again
            return Decided(pending_reply("unclear", lang) + "\n" + confirm_reply(change.description, lang),
                           {**fields, "outcome": PENDING_OUTCOME, "pending": _shown(change)})
        return self._commit(ctx, change, fields, conversation_id=conversation_id, turn_key=turn_key, key=key,
                            lang=lang)

    def _commit(self, ctx: TurnContext, change: Any, fields: dict[str, Any], *, conversation_id: str,
                turn_key: str, key: str, lang: str) -> Decided:
        """The yes: re-check against the current state, then commit exactly the kept plan."""
        ops = self.api.operations
        again = self.api.call_plan(ctx.nickname, change.steps, dry_run=True)
        ctx.trace.step("confirm_recheck", pending=change.id, outcome=str(again.outcome))
        if not again.outcome.succeeded:
            self.store.close(change.id, "refused")
            # A dry run runs every step (only a commit stops at the first refusal): report the refused one.
            index = next((i for i, r in enumerate(again.steps) if not r.outcome.succeeded), 0)
            failed = again.steps[index] if again.steps else again
            name, args = change.steps[min(index, len(change.steps) - 1)]
            return Decided(operation_reply(ops[name], failed, args, lang), {**fields, "outcome": str(failed.outcome)})
        if [c.model_dump(mode="json") for c in again.diff] != change.diff:  # the state moved: ask again
            self.store.close(change.id, "superseded")
            question, shown = self.offer(ctx, change.steps, again, conversation_id=conversation_id, key=key,
                                         lang=lang)
            return Decided(pending_reply("moved", lang) + "\n" + question,
                           {**fields, "outcome": PENDING_OUTCOME, "pending": shown})
        real = self.api.call_plan(ctx.nickname, change.steps, idempotency_key=change.idempotency_key,
                                  request_id=turn_key)
        ctx.trace.step("commit", operation=change.steps[0][0], outcome=str(real.outcome), committed=real.committed,
                       replayed=real.replayed, idempotency_key=change.idempotency_key, confirmed=True,
                       diff=[c.model_dump() for c in real.diff], money=commit_money(real.steps or [real]),
                       steps=[{"operation": r.operation, "args": args, "outcome": str(r.outcome), "message": r.message}
                              for (_, args), r in zip(change.steps, real.steps or [real])])
        ctx.trace.emit("commit", {"operation": change.steps[0][0], "operations": [n for n, _ in change.steps],
                                  "committed": real.committed, "queued": False, "outcome": str(real.outcome)})
        self.store.close(change.id, "committed" if real.committed else "refused")
        steps = real.steps or [real]
        lines = [operation_reply(ops[name], r, args, lang) for (name, args), r in zip(change.steps, steps)]
        outcome = real.outcome if real.committed else next((r.outcome for r in steps if not r.outcome.succeeded),
                                                           Outcome.REFUSED_PRECONDITION)
        ctx.trace.info["confirmed"] = real.committed
        return Decided("\n".join(lines), {**fields, "outcome": str(outcome), "committed": real.committed,
                                          "steps": [{"operation": n, "args": a, "outcome": str(r.outcome)}
                                                    for (n, a), r in zip(change.steps, steps)]})


def _unclear_before(ctx: TurnContext, change_id: int) -> bool:
    """Whether the last turn read the customer's answer to the change ``change_id`` as neither yes nor no."""
    last = (ctx.history[-1].trace or {}) if ctx.history else {}
    return any(s.get("route") == "confirm" and s.get("pending") == change_id and s.get("answer") == "unclear"
               for s in last.get("steps") or ())


def _shown(change: Any) -> dict[str, Any]:
    """A kept change as the turn shows it (the widget's Confirm and Cancel, the console, the eval)."""
    return {"id": change.id, "operations": [name for name, _ in change.steps], "description": change.description,
            "expires_at": change.expires_at.isoformat() + "Z"}
