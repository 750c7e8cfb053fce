"""The agent: identity → classify → execute (dry run) → verify → commit or queue → reply.

``Agent.handle`` runs one turn of a conversation following DESIGN.md "One request, end to end".
The acting user is the ``nickname`` argument (from the authenticated session), never model output.
The only database write of a turn is the commit after a passed verification (or the approval-queue
row); no model is called after it, so a model error (``LLMError``, raised to the caller) can never
leave a half-finished turn. A reply invalid for its schema even when redone ends the turn with an apology
instead. Architectures without a verifier never commit a write: it is queued.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from chops.domain.operations import operation_lines
from chops.domain.system import SystemApi
from chops.i18n import N_, reply_language, translate
from chops.llm import LLM, LLMError
from chops.pipeline import agenda, tally
from chops.pipeline.classifier import Classifier, insisting
from chops.pipeline.confirm import Confirmation, PendingStore
from chops.pipeline.context import Candidate, TurnContext, since_cancel
from chops.pipeline.demonstrations import Memory, recall, remember
from chops.pipeline.executor import Executor
from chops.pipeline.fields import found
from chops.pipeline.plans import ApprovalQueue, carry_out
from chops.pipeline.prompting import fragment, pack_prompts, static_heads, without_instructions
from chops.pipeline.replies import (answer_reply, anything_else_reply, conversation_reply, finished_request,
                                    not_in_system_reply)
from chops.pipeline.retrieval import Retriever
from chops.pipeline.single_prompt import answer_or_operate
from chops.pipeline.tiers import failed_check, redo, refused_plan, top_tier, written_back
from chops.pipeline.tools import ToolRanker
from chops.pipeline.trace import Trace
from chops.pipeline.verifier import Chooser, Verifier, identity
from chops.records import CONVERSATION_ROUTES, TurnRecord, TurnResult
from chops.router import Router
from chops.settings import Settings


def idempotency_key(turn_key: str) -> str:
    """The commit's idempotency key for a conversation turn: the same turn never writes twice."""
    return "turn-" + hashlib.sha256(turn_key.encode("utf-8")).hexdigest()[:40]


class Agent:
    """The classifier–executor–verifier pipeline over an ``Api``, an ``LLM`` and a guide index."""

    def __init__(self, api: SystemApi, llm: LLM, settings: Settings, index: Any | None = None, *,
                 approvals: ApprovalQueue, memory: Memory | None = None, router: Router | None = None,
                 pending: PendingStore | None = None, prompts: Path | None = None,
                 closing_question: bool = False, tools: ToolRanker | None = None,
                 split_requests: bool = False, currency: str | None = None,
                 clock: Callable[[], datetime] | None = None, reading: str = "steps") -> None:
        """``index`` may be None (no guides: the guide route says it cannot help); ``approvals``
        queues the writes staff must approve and says which operations always need approval;
        ``memory`` (None: off) recalls demonstrations and remembers verified solutions; ``router`` (None:
        off) decides the route of the messages it is sure of without a model call; ``pending`` (None: a write
        that needs the user's yes goes to staff instead) keeps changes described to the user; ``prompts``:
        the domain pack's own prompt files, used before ``prompts/``; ``closing_question``: a finished request's
        reply ends with "Is there anything else I can help you with?" (the pack's manners); ``tools`` (None: off)
        ranks the operations so the executor sees only the likely ones (``chops.pipeline.tools``);
        ``split_requests``: a message of several requests is handled one request after the other
        (``chops.pipeline.agenda``); ``currency`` (None: the system moves no money) the conversation's total of
        refunds and charges is said in (``chops.pipeline.tally``); ``clock`` (None: the wall's) the pack's "now", which
        the dates customers say are read against; ``reading``: how the operations route reads a message (``steps``
        or ``typed``, ``Executor``)."""
        self.reading = reading
        self.api, self.llm, self.settings = api, llm, settings
        self.clock = clock or datetime.now
        self.split_requests, self.currency = split_requests, currency
        self.approvals = approvals
        self.memory = memory
        self.prompts, self.closing_question = prompts, closing_question
        self.confirmation = Confirmation(llm, api, pending, settings.confirm_writes) if pending is not None else None
        self.operations = api.operations  # the domain's registry: the agent knows no operation by itself
        self.looks_up = any(op.observe for op in self.operations.values())  # plans are made from look-ups
        ops_text = self.operations_text = "\n".join(operation_lines(self.operations))
        self.retriever = Retriever(index, settings)
        arch = settings.architecture
        self.classifier = Classifier(llm, self.retriever, ops_text, levels=2 if arch == "cev_2level" else 1,
                                     router=router, keep_route=settings.router_keeps_route, operations=self.operations,
                                     typed=reading == "typed")
        self.executor = Executor(llm, api, self.retriever, self.operations, ops_text, steps=settings.executor_steps,
                                 tools=tools, layout=settings.tool_layout, id_choices=settings.id_choices,
                                 guide_profile=settings.guide_profile, reading=reading)
        self.verifier = Verifier(llm, settings) if arch.startswith("cev") else None
        self.chooser = Chooser(llm)

    def static_heads(self) -> list[tuple[str, str]]:
        """(role, static system prompt) of every prompt this architecture sends, in call order."""
        with pack_prompts(self.prompts):
            return static_heads(self.settings.architecture, self.operations_text, self.executor.static_operations,
                                verify=self.verifier is not None, confirm=self.confirmation is not None,
                                split=self.split_requests, reading=self.reading)

    def warm(self) -> int:
        """Load the model and cache every static prompt head (the service does this before it says
        ready, so the first user does not pay for it). Returns how many heads were warmed."""
        return sum(self.llm.warm(role, text) for role, text in self.static_heads())

    def handle(self, nickname: str, text: str, *, history: Sequence[TurnRecord] = (), turn_key: str,
               on_event: Callable[[str, dict], None] | None = None,
               conversation_id: str | None = None) -> TurnResult:
        """Answer or carry out ``text`` for ``nickname``; ``turn_key`` (e.g. "<conversation>:<seq>")
        derives the commit's idempotency key. A model error raises ``LLMError`` before anything is written."""
        with pack_prompts(self.prompts):
            result = self._handle(nickname, text, history=history, turn_key=turn_key, on_event=on_event,
                                  conversation_id=conversation_id)
            # The agenda's next requests, each with its own turn key (its commit's idempotency key).
            result = agenda.carried_on(result, text, history, lambda request, earlier, n, rest: self._handle(
                nickname, request, history=earlier, turn_key=f"{turn_key}#{n}", on_event=on_event,
                conversation_id=conversation_id, todo=rest))
        lang = reply_language([text, *(t.user_text for t in reversed(history))])
        result = agenda.asking_to_go_on(tally.with_total(result, history, self.currency, lang), lang)
        # One question at a time: not "anything else?" after "shall I go on with your next request?".
        if self.closing_question and finished_request(result) and not result.trace.get(agenda.GO_ON):
            result = result.model_copy(update={"reply": f"{result.reply}\n\n{anything_else_reply(lang)}"})
        return result

    def _handle(self, nickname: str, text: str, *, history: Sequence[TurnRecord], turn_key: str,
                on_event: Callable[[str, dict], None] | None, conversation_id: str | None,
                todo: list[str] | None = None) -> TurnResult:
        """One request: ``text`` (the message, or with ``todo`` one request of the agenda, the rest ``todo``)."""
        trace = Trace(on_event)
        trace.info.update(architecture=self.settings.architecture, turn_key=turn_key, nickname=nickname,
                          request=text, max_iterations=self.settings.max_iterations)
        lang = reply_language([text, *(t.user_text for t in reversed(history))])
        profile = self.api.profile(nickname)
        trace.step("profile", found=profile is not None)
        if profile is None:  # not a member: an honest answer, no operation, no model call
            return self._finish(trace, not_in_system_reply(lang), route="not_in_system")
        ctx = TurnContext(nickname=nickname, text=text, profile=profile, history=since_cancel(history),
                          trace=trace, currency=self.currency, now=self.clock())
        trace.info["profile"] = ctx.profile_text()
        if self.confirmation is not None and conversation_id is not None:
            decided = self.confirmation.decide(ctx, conversation_id, turn_key=turn_key, lang=lang,
                                               key=idempotency_key(turn_key))
            if decided is not None:  # the answer to "shall I go ahead?"; after a yes, the agenda goes on
                if decided.fields.get("outcome") != "declined":
                    trace.info[agenda.AGENDA] = agenda.left(history)
                return self._finish(trace, decided.reply, **decided.fields)
        ctx.insisting = todo is None and insisting(text, ctx.history)  # said again as it was: a person takes over
        if not ctx.insisting:
            agenda.plan(ctx, history, todo, self.llm if self.split_requests else None, self.operations.values())
        recall(self.memory, ctx)
        cand, passed = self._loop(ctx)  # every model call; an LLMError leaves the database untouched
        result = self._conclude(ctx, cand, passed, turn_key, conversation_id)
        return remember(self.memory, ctx, cand, passed, result)

    # --- the loop ---------------------------------------------------------------------------
    def _loop(self, ctx: TurnContext) -> tuple[Candidate, bool]:
        """The accepted candidate and True, or the chooser's pick (or, with no verifier, the only
        candidate) and False: only a verified candidate's write is ever committed."""
        trace = ctx.trace
        if self.settings.architecture == "executor_only":
            trace.iteration = 1
            cand = answer_or_operate(self.executor, ctx)
            self._executed(ctx, cand)
            return cand, False
        candidates: list[Candidate] = []
        rounds = self.settings.max_iterations if self.verifier else 1
        for i in range(1, rounds + 1):
            trace.iteration = i
            can_escalate = i < rounds and ctx.tier < top_tier(self.llm)
            try:
                with self.llm.at_tier(ctx.tier):
                    cand = self._attempt(ctx)
            except LLMError as exc:
                if exc.code != "invalid_output":
                    raise
                if can_escalate:
                    self._escalate(ctx, "schema")  # twice invalid for its schema: a stronger tier may manage
                elif i < rounds and not ctx.invalid_redone:
                    # Once a turn, told why: a plan for four items ran past the executor's tokens twice (train
                    # task 20) and the turn ended in an error the customer could do nothing with.
                    ctx.invalid_redone = True
                    ctx.feedback.append(fragment("feedback_invalid", n=i))
                    trace.step("redo", reason="invalid_output", of=exc.role, output=exc.output)
                else:  # invalid again: what was verified so far, or the honest "I couldn't find an answer"
                    trace.step("invalid", of=exc.role, output=exc.output)
                    break
                continue
            if cand.route in CONVERSATION_ROUTES:  # a fixed reply: nothing to execute or verify
                return cand, True
            if self.verifier is None:
                return cand, False
            check = failed_check(cand) if can_escalate else None
            if check is not None:  # rejected without the verifier: the next tier tries it
                cand.reason = check[1]
                ctx.add_feedback(cand)
                self._escalate(ctx, check[0])
                continue
            if cand.route == "guide" and cand.source is None and not cand.answer:
                return cand, False  # no excerpt answers it and no profile was read: the honest "no answer found"
            if cand.asks:  # code asks for what the request misses: nothing for a model to judge
                return cand, True
            # A typed reading refused by the pack's checks is the pack's answer, not a plan to guess again; one that
            # changes nothing is a misreading, redone like any.
            refused = refused_plan(cand, ctx.history, self.looks_up) \
                if i < rounds and not ctx.refusal_redone and (not cand.typed or cand.changes_nothing) else None
            if refused is not None:
                redo(ctx, cand, refused, self.operations)
                continue
            repeated = identity(cand) in ctx.verdicts
            with self.llm.at_tier(ctx.tier):
                passed = self.verifier.verify(ctx, cand)
            trace.emit("verify", {"score": cand.score, "threshold": cand.threshold, "passed": passed,
                                  "reason": cand.reason, "tier": self.llm.tier_name("verifier", ctx.tier)})
            candidates.append(cand)
            if passed:
                return cand, True
            if repeated and cand.score < self.settings.verify_end:
                # The feedback did not change the attempt, and its verdict can never reach even the last
                # threshold: more rounds would only repeat it (the models decode greedily).
                trace.info["stopped_early"] = i
                break
            ctx.add_feedback(cand)  # the reason steers the next classifier and executor prompts
            if can_escalate:
                self._escalate(ctx, "verifier")
        # An answer stating numbers it was not given is never sent: "$60.78 to be refunded (Source: policy.md)" was
        # chosen after three such attempts, the source made up too (train task 95).
        # Nor one saying a change was made that nothing made (``claims``), nor one leaving out the field its question
        # names (``fields.unstated``), nor one giving like entries a feature only some have (``fields.unlike``), nor
        # one that only writes back a refusal the redo was told (``tiers.written_back``).
        kept = [c for c in candidates if not c.invented and not written_back(c, ctx.refusals)]
        if not kept:  # every attempt invalid or invented: nothing to run; what any attempt's look-ups say of what
            # was asked (the last may have gone another route, which looked nothing up) or of the like entries it
            # gave one feature, else nothing to say (the customer hears an apology)
            said = next(filter(None, (found(ctx.text, c) for c in reversed(candidates))), None)
            answer = said and translate(reply_language(ctx.user_texts), N_("What I found in your records: {facts}"),
                                        facts=said)
            return Candidate(iteration=trace.iteration, route=trace.info.get("route") or "system", answer=answer), False
        candidates = kept
        with self.llm.at_tier(ctx.tier):
            chosen = self.chooser.choose(ctx, candidates)
        trace.info["chosen_iteration"] = chosen.iteration
        return chosen, False

    def _attempt(self, ctx: TurnContext) -> Candidate:
        """One iteration's classification and proposal (at the tier ``LLM.at_tier`` set)."""
        route = self.classifier.classify(ctx)
        ctx.trace.info["route"] = route
        routed = ctx.routed if ctx.routed is not None and ctx.routed.sure else None
        ctx.trace.emit("classify", {"route": route, "by": "router" if routed else "model",
                                    "tier": None if routed else self.llm.tier_name("classifier", ctx.tier),
                                    "confidence": ctx.routed.confidence if ctx.routed is not None else None})
        if route in CONVERSATION_ROUTES:
            return Candidate(iteration=ctx.trace.iteration, route=route)
        cand = self.executor.run(route, ctx)
        self._executed(ctx, cand)
        return cand

    def _escalate(self, ctx: TurnContext, reason: str) -> None:
        ctx.tier += 1
        ctx.trace.emit("escalate", {"tier": ctx.tier, "reason": reason})

    def _executed(self, ctx: TurnContext, cand: Candidate) -> None:
        cand.tier = self.llm.tier_name("executor", ctx.tier)
        check = failed_check(cand)
        ctx.trace.emit("execute", {"route": cand.route, "operation": cand.operation, "args": cand.args,
                                   "outcome": cand.outcome, "tier": cand.tier, "check": check and check[0],
                                   "steps": [{"operation": s.operation, "args": s.args, "outcome": s.outcome}
                                             for s in cand.steps]})

    # --- after the loop -------------------------------------------------------------------------
    def _conclude(self, ctx: TurnContext, cand: Candidate, passed: bool, turn_key: str,
                  conversation_id: str | None) -> TurnResult:
        trace, lang = ctx.trace, reply_language(ctx.user_texts)
        trace.info.update(passed=passed, tier=cand.tier)  # the loop's verdict on its own candidate
        if cand.operation is None and ctx.refused is not None and cand.route == "system":
            cand, passed = ctx.refused, False  # the refusal the redo only answered about (``tiers.redo``)
            trace.info["refused_reply"] = True
        fields = {"route": cand.route, "operation": cand.operation, "args": cand.args, "outcome": cand.outcome}
        trace.info.update(fields)
        if cand.route in CONVERSATION_ROUTES:
            return self._finish(trace, conversation_reply(cand.route, lang), **fields)
        if cand.operation is None:
            if ctx.feedback and cand.answer:  # any route's answer: told why, the 1.5B wrote the feedback back (task 46)
                cand.answer = without_instructions(cand.answer)
            if not (cand.answer or "").strip():
                trace.info["unanswered"] = True  # the apology, not an answer: the request is not finished
            return self._finish(trace, answer_reply(cand, lang), **fields)
        done = carry_out(self.api, self.approvals, ctx, cand, passed, key=idempotency_key(turn_key),
                         turn_key=turn_key, conversation_id=conversation_id, lang=lang,
                         verified_by="unverified" if self.verifier is None else "chooser",
                         confirmation=self.confirmation)
        fields.update(outcome=done.outcome, steps=done.steps)
        if done.pending:
            fields["pending"] = done.pending
        if done.queued:
            fields.update(queued=True, approval_id=done.approval_id)
        if done.committed:
            fields["committed"] = True
        return self._finish(trace, done.reply, **fields)

    def _finish(self, trace: Trace, reply: str, **fields: Any) -> TurnResult:
        if trace.info.get("told"):  # why the customer's own fallback was taken (``tiers.redo``)
            reply = f"{trace.info['told']}\n\n{reply}"
        totals = trace.totals()
        trace.info["reply"] = reply
        if fields.get("pending"):
            trace.info["pending"] = fields["pending"]  # the console and the eval read it from the stored trace
        operations = [step["operation"] for step in fields.get("steps") or []]
        trace.emit("reply", {"reply": reply, "operations": operations, "tier": trace.info.get("tier"),
                             **{k: v for k, v in fields.items() if k not in ("args", "steps", "pending")},
                             "pending": (fields.get("pending") or {}).get("id")})
        return TurnResult(reply=reply, iterations=trace.iteration, chars_in=totals["chars_in"],
                          chars_out=totals["chars_out"], cost_usd=totals["cost_usd"],
                          latency_s=round(trace.elapsed(), 4), trace=trace.to_dict(), **fields)
