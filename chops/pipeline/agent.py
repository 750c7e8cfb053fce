"""The agent: identity → classify → execute (dry run) → verify → commit or queue → reply.

``Agent.handle`` runs one turn of a conversation following DESIGN.md "One request, end to end".
The acting user is the ``nickname`` argument (from the authenticated session), never model output.
The only database write of a turn is the commit after a passed verification (or the approval-queue
row); no model is called after it, so a model error (``LLMError``, raised to the caller) can never
leave a half-finished turn. Architectures without a verifier never commit a write: it is queued.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from apis.outcomes import Outcome
from apis.registry import operation_lines
from chops.i18n import reply_language
from chops.llm import LLM
from chops.pipeline.classifier import Classifier
from chops.pipeline.context import Candidate, TurnContext
from chops.pipeline.executor import Executor
from chops.pipeline.prompting import system_part
from chops.pipeline.replies import answer_reply, not_in_system_reply, operation_reply, queued_reply, read_reply
from chops.pipeline.retrieval import Retriever
from chops.pipeline.trace import Trace
from chops.pipeline.verifier import Chooser, Verifier, identity
from chops.records import TurnRecord, TurnResult
from chops.settings import Settings


def idempotency_key(turn_key: str) -> str:
    """The commit's idempotency key for a conversation turn: the same turn never writes twice."""
    return "turn-" + hashlib.sha256(turn_key.encode("utf-8")).hexdigest()[:40]


class ApprovalQueue(Protocol):
    """Where writes that must not be committed by the agent go (``chops.store.ConversationStore``)."""

    def queue_approval(self, *, nickname: str, operation: str, args: dict[str, Any], idempotency_key: str,
                       dry_run: Any = None, conversation_id: str | None = None,
                       turn_id: int | None = None) -> int: ...

    def needs_approval(self, operation: str) -> bool: ...


class Agent:
    """The classifier–executor–verifier pipeline over an ``Api``, an ``LLM`` and a guide index."""

    def __init__(self, api: Any, llm: LLM, settings: Settings, index: Any | None = None, *,
                 approvals: ApprovalQueue) -> None:
        """``index`` may be None (no guides: the guide route says it cannot help); ``approvals``
        queues the writes staff must approve and says which operations always need approval."""
        from apis.registry import OPERATIONS

        self.api, self.llm, self.settings = api, llm, settings
        self.approvals = approvals
        self.operations = OPERATIONS
        ops_text = self.operations_text = "\n".join(operation_lines())
        self.retriever = Retriever(index, settings)
        arch = settings.architecture
        self.classifier = Classifier(llm, self.retriever, ops_text, levels=2 if arch == "cev_2level" else 1)
        self.executor = Executor(llm, api, self.retriever, OPERATIONS, ops_text)
        self.verifier = Verifier(llm, settings) if arch.startswith("cev") else None
        self.chooser = Chooser(llm)

    def static_heads(self) -> list[tuple[str, str]]:
        """(role, static system prompt) of every prompt this architecture sends, in call order."""
        ops = {"operations": self.operations_text}
        arch = self.settings.architecture
        if arch == "executor_only":
            return [("executor", system_part("pipeline_execute_only", ops))]
        classify = ([("classifier", system_part("pipeline_classify_level1")),
                     ("classifier", system_part("pipeline_classify_level2", ops))] if arch == "cev_2level"
                    else [("classifier", system_part("pipeline_classify_onelevel", ops))])
        execute = [("executor", system_part("pipeline_execute_system", ops)),
                   ("executor", system_part("pipeline_execute_guide")),
                   ("executor", system_part("pipeline_execute_profile"))]
        verify = [("verifier", system_part("pipeline_verify_operation")),
                  ("verifier", system_part("pipeline_verify_answer"))] if self.verifier else []
        return classify + execute + verify

    def warm(self) -> int:
        """Load the model and cache every static prompt head (the service does this before it says
        ready, so the first user does not pay for it). Returns how many heads were warmed."""
        return sum(self.llm.warm(role, text) for role, text in self.static_heads())

    def handle(self, nickname: str, text: str, *, history: Sequence[TurnRecord] = (), turn_key: str,
               on_event: Callable[[str, dict], None] | None = None,
               conversation_id: str | None = None) -> TurnResult:
        """Answer or carry out ``text`` for ``nickname``; ``turn_key`` (e.g. "<conversation>:<seq>")
        derives the commit's idempotency key. A model error raises ``LLMError`` before anything is written."""
        trace = Trace(on_event)
        trace.info.update(architecture=self.settings.architecture, turn_key=turn_key, nickname=nickname,
                          request=text, max_iterations=self.settings.max_iterations)
        lang = reply_language([text, *(t.user_text for t in reversed(history))])
        profile = self.api.profile(nickname)
        trace.step("profile", found=profile is not None)
        if profile is None:  # not a member: an honest answer, no operation, no model call
            return self._finish(trace, not_in_system_reply(lang), route="not_in_system")
        ctx = TurnContext(nickname=nickname, text=text, profile=profile, history=list(history), trace=trace)
        trace.info["profile"] = ctx.profile_text()
        cand, passed = self._loop(ctx)  # every model call; an LLMError leaves the database untouched
        return self._conclude(ctx, cand, passed, turn_key, conversation_id)

    # --- the loop ---------------------------------------------------------------------------
    def _loop(self, ctx: TurnContext) -> tuple[Candidate, bool]:
        """The accepted candidate and True, or the chooser's pick (or, with no verifier, the only
        candidate) and False: only a verified candidate's write is ever committed."""
        trace = ctx.trace
        if self.settings.architecture == "executor_only":
            trace.iteration = 1
            cand = self.executor.executor_only(ctx)
            self._executed(ctx, cand)
            return cand, False
        candidates: list[Candidate] = []
        rounds = self.settings.max_iterations if self.verifier else 1
        for i in range(1, rounds + 1):
            trace.iteration = i
            route = self.classifier.classify(ctx)
            trace.info["route"] = route
            trace.emit("classify", {"route": route})
            cand = self.executor.run(route, ctx)
            self._executed(ctx, cand)
            if self.verifier is None:
                return cand, False
            repeated = identity(cand) in ctx.verdicts
            passed = self.verifier.verify(ctx, cand)
            trace.emit("verify", {"score": cand.score, "threshold": cand.threshold, "passed": passed,
                                  "reason": cand.reason})
            candidates.append(cand)
            if passed:
                return cand, True
            if repeated and cand.score < self.settings.verify_end:
                # The feedback did not change the attempt, and its verdict can never reach even the last
                # threshold: more rounds would only repeat it (the models decode greedily).
                trace.info["stopped_early"] = i
                break
            ctx.add_feedback(cand)  # the reason steers the next classifier and executor prompts
        chosen = self.chooser.choose(ctx, candidates)
        trace.info["chosen_iteration"] = chosen.iteration
        return chosen, False

    def _executed(self, ctx: TurnContext, cand: Candidate) -> None:
        ctx.trace.emit("execute", {"route": cand.route, "operation": cand.operation, "args": cand.args,
                                   "outcome": cand.outcome})

    # --- after the loop -------------------------------------------------------------------------
    def _conclude(self, ctx: TurnContext, cand: Candidate, passed: bool, turn_key: str,
                  conversation_id: str | None) -> TurnResult:
        trace, lang = ctx.trace, reply_language(ctx.user_texts)
        fields = {"route": cand.route, "operation": cand.operation, "args": cand.args, "outcome": cand.outcome}
        trace.info.update(passed=passed, **fields)
        if cand.operation is None:
            return self._finish(trace, answer_reply(cand, lang), **fields)
        op = self.operations[cand.operation]
        if not cand.writes:  # a read already ran for real inside the executor
            return self._finish(trace, read_reply(op, cand.result, cand.args or {}, lang), **fields)
        key = idempotency_key(turn_key)
        dry = cand.result
        if dry.outcome == Outcome.OK and (not passed or self.approvals.needs_approval(cand.operation)):
            # The chooser's pick (never verified) or an operation staff must approve: queue, don't commit.
            approval_id = self.approvals.queue_approval(
                conversation_id=conversation_id, turn_id=None, nickname=ctx.nickname, operation=cand.operation,
                args=cand.args or {}, idempotency_key=key, dry_run=dry)
            trace.step("queue", operation=cand.operation, approval_id=approval_id, idempotency_key=key,
                       reason=("unverified" if self.verifier is None else "chooser") if not passed else "policy")
            trace.emit("commit", {"operation": cand.operation, "committed": False, "queued": True})
            return self._finish(trace, queued_reply(op, cand.args or {}, lang), queued=True,
                                approval_id=approval_id, **fields)
        if not passed or dry.outcome == Outcome.REFUSED_OTHER_PERSON:
            # A refusal or no-op picked by the chooser changes nothing: report the dry run honestly.
            # A write about another person never ran, and must not run now: it would change the sender.
            return self._finish(trace, operation_reply(op, dry, cand.args or {}, lang), **fields)
        # Passed: the same code path for real; preconditions are re-checked inside the transaction.
        real = self.api.call(cand.operation, ctx.nickname, cand.args or {}, idempotency_key=key,
                             request_id=turn_key)
        trace.step("commit", operation=cand.operation, args=cand.args, outcome=str(real.outcome),
                   message=real.message, committed=real.committed, replayed=real.replayed,
                   idempotency_key=key, diff=[c.model_dump() for c in real.diff])
        trace.emit("commit", {"operation": cand.operation, "committed": real.committed, "queued": False,
                              "outcome": str(real.outcome)})
        fields["outcome"] = str(real.outcome)
        return self._finish(trace, operation_reply(op, real, cand.args or {}, lang), committed=real.committed,
                            **fields)

    def _finish(self, trace: Trace, reply: str, **fields: Any) -> TurnResult:
        totals = trace.totals()
        trace.info["reply"] = reply
        trace.emit("reply", {"reply": reply, **{k: v for k, v in fields.items() if k != "args"}})
        return TurnResult(reply=reply, iterations=trace.iteration, chars_in=totals["chars_in"],
                          chars_out=totals["chars_out"], cost_usd=totals["cost_usd"],
                          latency_s=round(trace.elapsed(), 4), trace=trace.to_dict(), **fields)
