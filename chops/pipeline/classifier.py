"""The classifier: which route answers the request (basic_info, guide or system, or a conversational
route: greeting, thanks, cancel, handoff, out_of_scope).

A fresh message first passes the small-talk gate: "is it small talk rather than anything about the
platform?" (greetings, thanks, dropping a request, asking for a person, off-topic), and only when it
is, a second question says which kind. Both are decided by the model, in any wording and language,
not by keyword lists. As extra values of level 1 they pulled platform requests away from their
routes (``python -m bench.classify``), so the gate is a question of its own. It is not asked again
after a rejected attempt: a conversational route ends the turn without a verifier. (The one-level
ablations of the paper have no gate.)

Before all of that, on a message's first attempt, the embedding router (``chops.router``) may decide
alone: when it is sure (its calibrated threshold), no model is asked at all. It is not asked when the
last turn asked for a missing value (the message is then an answer to that question, which only the
history shows): such an answer, once past the small-talk gate ("never mind" drops the request), keeps the
route of the request it completes, with no model asked. After a rejected attempt, a route the router was
sure of is kept once (``keep_route``: the verifier's reason goes to the executor, which is what usually
needed it); from the attempt after that, the model classifier decides with the verifier's reason, as in
the paper.

Two levels (the paper's design, and the default): level 1 asks "does the message ask for one of the
sender's own profile facts?" (it is given the list of facts; their values are not needed to decide);
level 2 sees one line per operation (and, with ``classifier_chunks``, short guide excerpts) and
picks guide or system. Anything that is not an operation goes the guide way (the guide executor
then says when the guides do not cover it). Prompts are short: this role is meant for the cheapest
model, and its static head stays in llama.cpp's prefix cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from chops.domain.operations import Operation
from chops.llm import LLM
from chops.pipeline.agenda import GO_ON
from chops.pipeline.confirm import PENDING_OUTCOME
from chops.pipeline.context import TurnContext, asked_for_value
from chops.pipeline.demonstrations import demonstrations_section
from chops.pipeline.lookups import seen_data
from chops.pipeline.prompting import messages
from chops.pipeline.retrieval import Retriever
from chops.pipeline.schemas import (ConversationKind, Level1Decision, Level2Decision, OneLevelDecision,
                                    SmallTalkGate)
from chops.pipeline.walk import mentioned, record_fields
from chops.records import TurnRecord
from chops.router import Decision, Router

_ROUTE = {"own_fact": "basic_info", "answer_from_guide": "guide", "do_operation": "system",
          "look_up_people": "system", "something_else": None,
          # conversational messages: a fixed reply, no executor (see chops.records.CONVERSATION_ROUTES)
          "greeting": "greeting", "thanks_or_goodbye": "thanks", "cancel_request": "cancel",
          "ask_for_person": "handoff", "unrelated_to_platform": "out_of_scope", "platform_question": None}


# The conversational routes a request split off a message of several (``TurnContext.message``) cannot take: the split
# leaves greetings and thanks out, and "is it still in transit?" alone, a part of a question about an order, was
# declined as off-topic by the model (train task 43). A hand-off or a "never mind" may still be one of the requests
# (the model's "never mind", not one the embedding router alone is sure of: ``_NOT_ROUTED_PART``), and so may an
# off-topic question the embedding router is sure of (``_may_take``).
_NOT_A_PART = ("greeting", "thanks", "out_of_scope")
_NOT_ROUTED_PART = ("cancel",)


MIN_REPEATED_WORDS = 4  # "ok", "no thanks" said twice is no insisting


def insisting(text: str, history: Sequence[TurnRecord]) -> bool:
    """Whether the customer's new message ``text`` says again, word for word, what they asked of the operations route in
    the last turn, which did nothing (refused, or answered in words; not a value asked for, nor a change waiting for
    their yes): what they want is not something this agent can do ("please make an exception and undo the
    cancellation", told it cannot be undone, said six times until the turns ran out: train task 50), so a person takes
    over (``TurnContext.insisting``). A guide or profile question asked again is answered again (a guide may have
    changed since). Nor is an answer to "shall I go on with your next request?" (``agenda.GO_ON``) said again: "Yes,
    that's everything. Please go ahead." to two such questions in a row handed the conversation to staff (train task
    103)."""
    last = history[-1] if history else None
    said = " ".join(text.split()).casefold()
    return last is not None and last.route == "system" and not last.committed and not asked_for_value(last) \
        and last.outcome != PENDING_OUTCOME and not (last.trace or {}).get(GO_ON) \
        and len(said.split()) >= MIN_REPEATED_WORDS \
        and " ".join(last.user_text.split()).casefold() == said


def _may_take(ctx: TurnContext, route: str, routed: bool = False) -> bool:
    """Whether ``ctx``'s request may take ``route``, the router's where ``routed`` (``_NOT_A_PART``,
    ``_NOT_ROUTED_PART``); a route it may not is noted in the trace. The router's examples of off-topic questions are
    general knowledge ("who painted the Mona Lisa?"), and where it is sure, such a part is declined as off-topic: sent
    on to the guides, it cost four more model calls and the customer heard "I couldn't find an answer" (own8). Its
    examples of a "never mind" are short, and it was sure "By the way, I go by NoNo." after a question was one: the
    customer heard their request dropped (train task 67)."""
    barred = _NOT_A_PART + (_NOT_ROUTED_PART if routed else ())
    if ctx.message is None or route not in barred or (route == "out_of_scope" and ctx.router_sure_of(route)):
        return True
    ctx.trace.step("classifier", part_of_message=True, not_taken=route)
    return False


def asks_change_of_held(text: str, operations: Mapping[str, Operation], sources: Sequence[object]) -> bool:
    """Whether ``text`` names the kind of one of ``operations``' writes ("exchange", "return") and a thing by which the
    records of ``sources`` (the customer's own: the profile) are named ("the tablet", of an order holding one): a
    request of that change of what the customer holds, however it is worded ("Can you exchange the tablet for the
    same item?"), which the embedding router, sure it asked about the policy, sent to the guides (train task 30)."""
    for op in operations.values():
        if not op.writes or not op.named_in(text):
            continue
        fields = record_fields(sources, set(op.choice_names().values()))
        if any(mentioned(list(held), held, text) for held in fields.values()):
            return True
    return False


class Classifier:
    """Decides the route of a request; ``levels`` is 1 (one three-way choice) or 2."""

    def __init__(self, llm: LLM, retriever: Retriever, operations_text: str, levels: int = 2,
                 router: Router | None = None, keep_route: bool = False,
                 operations: Mapping[str, Operation] | None = None, typed: bool = False) -> None:
        """``keep_route``: the second attempt keeps the route the router was sure of at the first; ``operations``:
        the pack's, whose writes a guide question may not name of what the customer holds (``asks_change_of_held``)
        for the router's sure guide route to be taken; ``typed``: the operations route reads messages typed
        (``chops.pipeline.read``), so an answer to its question goes back to it (``answers_typed``)."""
        self.typed = typed
        self.llm = llm
        self.operations = operations or {}
        self.keep_route = keep_route
        self.retriever = retriever
        self.operations_text = operations_text
        self.levels = levels
        self.router = router if levels == 2 else None  # the one-level ablations stay the paper's

    def classify(self, ctx: TurnContext) -> str:
        """The route for ``ctx`` (see ``chops.records.Route``); records its steps in the trace."""
        if self.levels == 2 and ctx.trace.iteration == 1 and ctx.insisting:
            ctx.trace.step("classifier", route="handoff", insisting=True)
            return "handoff"
        if (route := self.answers_typed(ctx)) is not None:
            return route
        if ctx.held is not None:
            # Its look-ups hold the answer: asked the total of all the grills, the classifier sent the redo told so to
            # the guides, which hold no such number, and the customer heard "no answer found" (train task 76).
            ctx.trace.step("classifier", route=ctx.held, held=True)
            return ctx.held
        if (decision := self.route_by_embedding(ctx)) is not None and _may_take(ctx, decision, routed=True):
            return decision
        history = ctx.history_section(turns=1)  # the last exchange tells a follow-up apart
        feedback = ctx.feedback_section()
        # The gate belongs to the two-level design; the one-level ablations stay the paper's.
        if self.levels == 2 and ctx.trace.iteration == 1 and (route := self.small_talk(ctx, history)) is not None \
                and _may_take(ctx, route):
            return route
        last = ctx.history[-1] if ctx.history else None
        if self.levels == 2 and last is not None and (asked_for_value(last) or ctx.replaced) and last.route:
            # The answer to the agent's own question completes the request asked about (``agenda.plan``), whose route
            # it keeps: "I no longer need it", the reason for a cancel, was taken for a profile fact (train task 24).
            # So does another value for a refused one ("PayPal then"), which two more calls sent the same way.
            ctx.trace.step("classifier", route=last.route, answer=True)
            return last.route
        if self.levels == 1:
            msgs = messages("pipeline_classify_onelevel", static={"operations": self.operations_text},
                            history=history, feedback=feedback, profile=ctx.profile_text(),
                            demonstrations=demonstrations_section(ctx.demonstrations, "onelevel"),
                            chunks=self.retriever.short_text(ctx), request=ctx.text)
            decision, step = ctx.trace.call("classifier", lambda lg: self.llm.structured(
                "classifier", msgs, OneLevelDecision, ledger=lg), level=1)
            step.update(decision=decision.route, route=_ROUTE[decision.route])
            route = _ROUTE[decision.route]
            return route
        # Level 1 sees the list of profile facts (in the static prompt), not their values: the
        # question is whether the message asks for one, and a fully static head keeps the KV cache warm.
        msgs = messages("pipeline_classify_level1", history=history, feedback=feedback, request=ctx.text,
                        demonstrations=demonstrations_section(ctx.demonstrations, "level1"))
        first, step = ctx.trace.call("classifier", lambda lg: self.llm.structured(
            "classifier", msgs, Level1Decision, ledger=lg), level=1)
        step["decision"] = first.route
        if first.route == "own_fact":
            step["route"] = "basic_info"
            return "basic_info"
        msgs = messages("pipeline_classify_level2", static={"operations": self.operations_text},
                        history=history, feedback=feedback, chunks=self.retriever.short_text(ctx),
                        request=ctx.text, demonstrations=demonstrations_section(ctx.demonstrations, "level2"))
        second, step = ctx.trace.call("classifier", lambda lg: self.llm.structured(
            "classifier", msgs, Level2Decision, ledger=lg), level=2)
        step.update(decision=second.route, route=_ROUTE[second.route])
        route = _ROUTE[second.route]
        return route

    def answers_typed(self, ctx: TurnContext) -> str | None:
        """The route of an answer to the typed reading's question for a missing value: the operations route, whose
        reading takes the answer or reads it as a new request, unless the router is sure the customer drops the
        request or asks for a person. The small-talk gate took "I'm sick", the reason asked for a cancel, for a
        "never mind", and the request was dropped twice."""
        last = ctx.history[-1] if ctx.history else None
        if not self.typed or last is None or last.route != "system" or not asked_for_value(last) \
                or ctx.trace.iteration != 1:
            return None
        decision = self.router.decide(ctx.text) if self.router is not None else None
        route = decision.route if decision is not None and decision.sure and decision.route in ("cancel", "handoff") \
            else "system"
        ctx.trace.step("classifier", route=route, answers_question=True)
        return route

    def route_by_embedding(self, ctx: TurnContext) -> str | None:
        """The router's route when it may decide and is sure; None when the model must (see the module)."""
        kept = ctx.routed
        if ctx.trace.iteration == 2 and self.keep_route and kept is not None and kept.sure:
            ctx.trace.step("router", route=kept.route, confidence=kept.confidence, sure=True, kept=True)
            return kept.route
        ctx.routed = None
        if self.router is None or ctx.trace.iteration != 1 or (ctx.history and asked_for_value(ctx.history[-1])):
            return None
        decision = self.router.decide(ctx.text)
        of_held = decision.sure and decision.route == "guide" and ctx.profile is not None \
            and asks_change_of_held(ctx.text, self.operations, seen_data(ctx, []))
        if of_held:  # the model decides
            decision = Decision(decision.route, decision.confidence, sure=False)
        ctx.trace.step("router", route=decision.route, confidence=decision.confidence, sure=decision.sure,
                       threshold=round(self.router.threshold, 4), **({"change_of_held": True} if of_held else {}))
        ctx.routed = decision
        return decision.route if decision.sure else None

    def small_talk(self, ctx: TurnContext, history: str) -> str | None:
        """The conversational route of a small-talk message, or None for anything about the platform."""
        msgs = messages("pipeline_classify_small_talk", history=history, request=ctx.text)
        gate, step = ctx.trace.call("classifier", lambda lg: self.llm.structured(
            "classifier", msgs, SmallTalkGate, ledger=lg), level=0)
        step["decision"] = gate.route
        if gate.route == "about_the_platform":
            return None
        msgs = messages("pipeline_classify_conversation", history=history, request=ctx.text)
        kind, step = ctx.trace.call("classifier", lambda lg: self.llm.structured(
            "classifier", msgs, ConversationKind, ledger=lg), level=0)
        step.update(decision=kind.route, route=_ROUTE[kind.route])
        return _ROUTE[kind.route]
