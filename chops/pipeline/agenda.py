"""Several requests in one message, one after the other.

"Change my default address to the Denver one and ship my pending orders there too, and swap the speaker for a green
one": a 1.5B model, shown the whole message, proposes one of the changes and the turn ends; asked "anything else?",
the customer says no, and the rest of what they asked for is never done. So, where a domain pack asks for it
(``DomainPack.split_requests``: a shop whose every write waits for the customer's yes), a new message that may hold
several requests is first split by the model into self-contained requests (``chops.pipeline.splitting``), and the
turn handles the first as if it were the message. What is left is the turn's
agenda (kept in its trace): once a request is done (committed on the customer's yes, answered, or refused with a
reason) the next is taken up in the same turn, and its reply follows the last one's ("Done: … Here is what I will do
next: … Shall I go ahead?"). A request that waits for the customer (a change to confirm, a value to give) keeps the
rest on the agenda until they answer; a "no", a "never mind", a hand-off or a new message of their own drops it.
A request refused keeps the rest too, and the reply asks whether to go on (``asking_to_go_on``): the customer may
want something in its place first ("then a size 9 pair"). Their answer, read by the model, takes up the next request
or is handled first, the rest after it (``plan``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from chops.domain.operations import Operation
from chops.domain.outcomes import Outcome
from chops.i18n import N_, translate
from chops.llm import LLM, LLMError
from chops.pipeline.asking import names_change
from chops.pipeline.confirm import PENDING_OUTCOME, UNSURE_OUTCOME
from chops.pipeline.context import TurnContext, asked_for_value
from chops.pipeline.prompting import messages
from chops.pipeline.schemas import MAX_REQUESTS, GoOn
from chops.pipeline.splitting import may_hold_several, split
from chops.pipeline.walk import made_of, words_of
from chops.records import TurnRecord, TurnResult

AGENDA = "agenda"  # the trace key of the requests still to do, in order
GO_ON = "go_on"  # the trace key of the request a refusal's reply asked whether to go on with (``asking_to_go_on``)


def plan(ctx: TurnContext, history: Sequence[TurnRecord], todo: list[str] | None, llm: LLM | None,
         operations: Iterable[Operation] = ()) -> None:
    """The turn's agenda (``AGENDA`` in its trace): ``todo`` for a request taken from it; the last turn's when this
    message gives the value it asked for, or another for a value its write was refused for (``replaced_values``, kept
    as ``ctx.replaced``; the request asked about, with this answer, is then the turn's request);
    the last turn's, as ``_resume`` reads the answer, when it asked whether to go on after a refusal; else, with an
    ``llm`` to split with, the message's requests after the first, which becomes the turn's request (``ctx.message``
    keeps the whole message, as it does for a request taken from the agenda); ``operations``: the pack's, which
    the split reads for two changes in one request (``splitting._gapped``)."""
    replaced = replaced_values(history[-1], ctx.text, operations) if history and todo is None else {}
    if todo is not None:
        ctx.trace.info[AGENDA] = todo
        ctx.message = history[-1].user_text if history else None  # the message it was split off
    elif history and (asked_for_value(history[-1]) or replaced):
        ctx.trace.info[AGENDA] = left(history)
        ctx.replaced = replaced
        # The answer completes the request asked about, which stays the turn's request: answered "the canister one"
        # (which vacuum cleaner to return), the 1.5B, shown the answer alone, proposed both vacuums' exchange, and no
        # check saw that a return was asked for (train tasks 46, 47).
        asked = (history[-1].trace or {}).get("request") or history[-1].user_text
        if asked and asked.strip() != ctx.text.strip():
            ctx.message, ctx.text, ctx.asked = ctx.text, f"{asked.rstrip()} {ctx.text.strip()}", asked
            ctx.trace.info.update(request=ctx.text, message=ctx.message)
    elif llm is not None and _asked_to_go_on(history):
        _resume(ctx, history, llm, operations)
    elif llm is not None:
        _split_message(ctx, llm, operations)


def replaced_values(last: TurnRecord, text: str, operations: Iterable[Operation]) -> dict[str, str]:
    """The values ``text`` replaces: where the ``last`` turn's write was refused and ``text`` names no change of its
    own, ``{argument: value}`` of that write's arguments that are no record changed (``CHOICES_WHERE``) and whose
    values the refusal names, as in "a refund goes to the order's original payment method (…) or a gift card, not to
    credit_card_…". Such a message completes the refused request (``plan``): read alone, "Alright, PayPal then." was
    proposed as a payment change of the delivered order. And the request is not offered those values again
    (``TurnContext.replaced``): its text still said "my credit card", and the 1.5B proposed the card again turn after
    turn while the customer said "PayPal then" (own8)."""
    operations = list(operations)
    op = next((o for o in operations if o.name == last.operation and o.writes), None)
    if op is None or last.outcome not in (Outcome.REFUSED_PRECONDITION, Outcome.REFUSED_INVALID_ARG) \
            or names_change(text, operations) or _own_refusal(last):
        return {}
    records = set(op.choice_states())
    return {arg: v for arg, v in (last.args or {}).items()
            if arg not in records and isinstance(v, str) and len(v) >= 4 and v in (last.reply or "")}


def _split_message(ctx: TurnContext, llm: LLM, operations: Iterable[Operation]) -> None:
    """The message's first request as the turn's, the rest its agenda (when it may hold several)."""
    if may_hold_several(ctx.text):
        first, *rest = split(llm, ctx.text, ctx.trace, operations)
        if rest:
            ctx.message, ctx.text = ctx.text, first
            ctx.trace.info.update({AGENDA: rest, "request": first, "message": ctx.message})


def _asked_to_go_on(history: Sequence[TurnRecord]) -> bool:
    """Whether the last turn's reply asked whether to go on after a refusal (``asking_to_go_on``)."""
    return bool(history) and bool((history[-1].trace or {}).get(GO_ON)) and bool(left(history))


def _resume(ctx: TurnContext, history: Sequence[TurnRecord], llm: LLM, operations: Iterable[Operation]) -> None:
    """The customer's answer to "shall I go on with your next request, or is there something you would like in place
    of this one?", read by the model (``GoOn``). Go on: the next request is the turn's, the rest its agenda. Anything
    else (what they want in the refused one's place, a question): the message is handled first, and the rest after
    it, but for a request the message says again (the customer repeating their whole list). The model is asked for
    no "stop": read as a no to the next request, "then leave that order as it is" and "then I'll send it back
    instead" lost it (own5). A never-mind, and a thanks or goodbye ("No, that's all, thanks"), end the agenda as the
    small-talk gate reads them (``goes_on``)."""
    rest, last = left(history), history[-1].trace or {}
    msgs = messages("pipeline_go_on", refused=last.get("request") or history[-1].user_text, following=rest[0],
                    request=ctx.text)
    try:
        out, step = ctx.trace.call("classifier", lambda lg: llm.structured("classifier", msgs, GoOn, ledger=lg),
                                   route="go_on")
        step["answer"] = out.answer
    except LLMError as exc:
        if exc.code != "invalid_output":
            raise
        out = GoOn(answer="instead")
    if out.answer == "go_on":
        ctx.message, ctx.text = last.get("message") or history[-1].user_text, rest[0]
        ctx.trace.info.update({AGENDA: rest[1:], "request": rest[0], "message": ctx.message})
        return
    _split_message(ctx, llm, operations)
    said = ctx.message or ctx.text
    ctx.trace.info[AGENDA] = [*(ctx.trace.info.get(AGENDA) or []), *(r for r in rest if not _said_again(r, said))]


def _own_refusal(last: TurnRecord) -> bool:
    """Whether ``last``'s request was refused by the agent itself (``context.as_told``: done already in this
    conversation, a whole order asked for one item), which names no value to replace: its reason "no longer needed"
    stood in "That was already done …: Order #W… is cancelled (no longer needed)", and the customer's "Yes, go ahead"
    to "Shall I go on with your next request?" proposed the cancel done again, twice (train task 31)."""
    verdict = next((s for s in reversed((last.trace or {}).get("steps") or []) if s.get("role") == "verifier"), {})
    return bool(verdict.get("as_told"))


SAID_AGAIN = 0.5  # the share of a request's words a later message holds where it asks for that request again


def _said_again(request: str, text: str) -> bool:
    """Whether ``text`` asks again for ``request`` (``SAID_AGAIN`` of its words, ``walk.words_of``): a customer
    answering a refusal with their whole list again ("new boots in size 9, and the jigsaw with fewer pieces") has
    the jigsaw's request once, not twice."""
    return bool(words_of(request)) and made_of(request, text, SAID_AGAIN)


def carried_on(result: TurnResult, text: str, history: Sequence[TurnRecord],
               handle: Callable[[str, list[TurnRecord], int, list[str]], TurnResult]) -> TurnResult:
    """While ``result`` finished its request and its agenda holds more, the next request in the same turn:
    ``handle(request, history, n, the rest)`` with the message so far as the last turn of the history (its ids are
    grounded by the customer's own words); the replies joined (``joined``)."""
    for n in range(1, MAX_REQUESTS):
        todo = result.trace.get(AGENDA) or []
        if not todo or not goes_on(result):
            break
        result = joined(result, handle(todo[0], [*history, result.to_record(text)], n, todo[1:]))
    return result


def left(history: Sequence[TurnRecord]) -> list[str]:
    """The agenda the last turn left, or []."""
    last = history[-1] if history else None
    return list(((last.trace or {}).get(AGENDA) or []) if last is not None else [])


def goes_on(result: TurnResult) -> bool:
    """Whether the next request may be taken up after ``result``: its request is done (committed, answered), not
    refused (the customer is asked first: ``asking_to_go_on``), not waiting for the customer (a yes, a missing
    value, staff) and not dropped, ended ("no, that's all, thanks": the next change was proposed to a customer who
    had just said they wanted nothing more) or handed off."""
    waiting = result.pending or result.queued or result.error or result.outcome in (
        PENDING_OUTCOME, UNSURE_OUTCOME, "refused_missing_args")
    return not waiting and not refused(result) and result.route not in ENDS


ENDS = ("handoff", "cancel", "thanks", "not_in_system", None)  # the routes after which the agenda is not taken up


def refused(result: TurnResult) -> bool:
    """Whether ``result``'s (last) request was refused with a reason (no value asked for). Its outcome tells, not
    ``committed``: a turn whose yes committed one request and whose next request was refused holds both."""
    return result.route == "system" and (result.outcome or "").startswith("refused_") \
        and result.outcome != "refused_missing_args"


def asking_to_go_on(result: TurnResult, lang: str) -> TurnResult:
    """``result`` with, where it refused its request and more wait on its agenda, the question whether to go on with
    the next (``GO_ON`` in its trace): told the same boots are no longer sold, the customer wanted a size 9 pair in
    their place, and had no turn to say so while the reply went on to confirm the next request (train task 107)."""
    todo = result.trace.get(AGENDA) or []
    if not todo or not refused(result):
        return result
    question = translate(lang, N_("Shall I go on with your next request (“{request}”), or is there something "
                                  "you would like in place of this one?"), request=todo[0].strip())
    return result.model_copy(update={"reply": f"{result.reply}\n\n{question}",
                                     "trace": {**result.trace, GO_ON: todo[0]}})


def joined(first: TurnResult, then: TurnResult) -> TurnResult:
    """One turn's result from two requests handled in it: the second's state (its route, its pending change), both
    replies, both commits, the costs summed, and one trace whose steps are both (the conversation eval and the
    next turn's look-ups read them) with the first's confirmation kept. A second reply the first holds already is not
    said again: "By the way, I go by NoNo.", split off a question, was answered with the question's answer once more
    (train task 67)."""
    trace: dict[str, Any] = {**then.trace, "steps": [*(first.trace.get("steps") or []), *(then.trace.get("steps") or [])],
                             "requests": [*(first.trace.get("requests") or [first.trace.get("request")]),
                                          then.trace.get("request")]}
    if first.trace.get("confirmed"):
        trace["confirmed"] = True
    return then.model_copy(update={
        "reply": first.reply if then.reply.strip() in first.reply else f"{first.reply}\n\n{then.reply}",
        "committed": first.committed or then.committed,
        "steps": [*first.steps, *then.steps], "iterations": first.iterations + then.iterations,
        "chars_in": first.chars_in + then.chars_in, "chars_out": first.chars_out + then.chars_out,
        "cost_usd": first.cost_usd + then.cost_usd, "latency_s": round(first.latency_s + then.latency_s, 4),
        "trace": trace})
