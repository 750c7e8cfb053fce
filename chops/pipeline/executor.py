"""The executor: one prompt per route, producing a ``Candidate``.

basic_info answers from the profile; guide answers from long excerpts and cites one of them; system
returns exactly one typed operation call, whose argument values are then grounded in the user's own
words before the Api runs it — as a dry run for a write, normally for a read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chops.llm import LLM
from chops.llm.streaming import JsonStringField
from chops.pipeline.context import Candidate, TurnContext
from chops.pipeline.grounding import ground_args
from chops.pipeline.prompting import messages
from chops.pipeline.retrieval import Retriever
from chops.pipeline.schemas import ANSWER_DIRECTLY, GuideAnswer, ProfileAnswer, proposal_schema
from chops.pipeline.targets import others_named, refusal


class Executor:
    """Carries out a route for a turn; never commits (the agent does, after verification)."""

    def __init__(self, llm: LLM, api: Any, retriever: Retriever, operations: dict[str, Any],
                 operations_text: str) -> None:
        self.llm = llm
        self.api = api
        self.retriever = retriever
        self.operations = operations
        self.operations_text = operations_text
        self.names = tuple(operations)

    def run(self, route: str, ctx: TurnContext) -> Candidate:
        """The candidate for ``route`` at the current iteration."""
        if route == "basic_info":
            return self.answer_profile(ctx)
        if route == "guide":
            return self.answer_guide(ctx)
        return self.propose_operation(ctx)

    def answer_profile(self, ctx: TurnContext) -> Candidate:
        """Answer from the sender's profile."""
        msgs = messages("pipeline_execute_profile", history=ctx.history_section(),
                        feedback=ctx.feedback_section(), profile=ctx.profile_text(), request=ctx.text)
        out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
            "executor", msgs, ProfileAnswer, ledger=lg, on_delta=_answer_stream(ctx)), route="basic_info")
        step["answer"] = out.answer
        return Candidate(iteration=ctx.trace.iteration, route="basic_info", answer=out.answer)

    def answer_guide(self, ctx: TurnContext) -> Candidate:
        """Answer from the long guide excerpts, citing the one used."""
        chunks, rendered = self.retriever.long_text(ctx)
        # The profile too: a question level 1 wrongly sent here ("am I a team leader?") still gets answered.
        msgs = messages("pipeline_execute_guide", history=ctx.history_section(), feedback=ctx.feedback_section(),
                        profile=ctx.profile_text(), chunks=rendered, request=ctx.text)
        out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
            "executor", msgs, GuideAnswer, ledger=lg, on_delta=_answer_stream(ctx)), route="guide")
        source = chunks[out.source - 1] if 1 <= out.source <= len(chunks) else None
        step.update(answer=out.answer, source=_cite(source))
        return Candidate(iteration=ctx.trace.iteration, route="guide", answer=out.answer, source=source)

    def propose_operation(self, ctx: TurnContext) -> Candidate:
        """One typed operation call, grounded, then run (dry run for a write)."""
        msgs = messages("pipeline_execute_system", static={"operations": self.operations_text},
                        history=ctx.history_section(), feedback=ctx.feedback_section(), request=ctx.text)
        schema = proposal_schema(self.names)
        out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
            "executor", msgs, schema, ledger=lg), route="system")
        call = out.call
        return self.run_operation(ctx, call.operation, call.args.model_dump(by_alias=True), step)

    def executor_only(self, ctx: TurnContext) -> Candidate:
        """The ablation without a classifier: one prompt decides answer-or-operation."""
        chunks, rendered = self.retriever.long_text(ctx)
        msgs = messages("pipeline_execute_only", static={"operations": self.operations_text},
                        history=ctx.history_section(), feedback=ctx.feedback_section(),
                        profile=ctx.profile_text(), chunks=rendered, request=ctx.text)
        schema = proposal_schema(self.names, with_answer=True)
        out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
            "executor", msgs, schema, ledger=lg), route=None)
        call = out.call
        if call.operation == ANSWER_DIRECTLY:
            step.update(route="guide", answer=call.answer)
            return Candidate(iteration=ctx.trace.iteration, route="guide", answer=call.answer)
        step["route"] = "system"
        return self.run_operation(ctx, call.operation, call.args.model_dump(by_alias=True), step)

    def run_operation(self, ctx: TurnContext, name: str, proposed: dict[str, Any],
                      step: dict[str, Any]) -> Candidate:
        """Ground ``proposed`` and run ``name`` for the caller: a write as a dry run, a read for real.

        A write whose request names another member as its target is refused without running
        (``chops.pipeline.targets``): it would change the sender's account, not theirs."""
        args, dropped = ground_args(proposed, ctx.user_texts)
        writes = bool(self.operations[name].writes)
        others = others_named(self.api, ctx, args) if writes else []
        # The acting user is ctx.nickname, set by the caller from the session — never a model value.
        result = refusal(name, ctx.nickname, others) if others else self.api.call(name, ctx.nickname, args,
                                                                                 dry_run=writes)
        step.update(operation=name, proposed_args=proposed, args=args, ungrounded=dropped, writes=writes,
                    target=ctx.nickname if writes else None, others_named=others, dry_run=result.dry_run,
                    outcome=str(result.outcome), message=result.message, diff=[c.model_dump() for c in result.diff])
        return Candidate(iteration=ctx.trace.iteration, route="system", operation=name, proposed_args=proposed,
                         args=args, dropped=dropped, writes=writes, result=result)


def _answer_stream(ctx: TurnContext) -> Callable[[str], None] | None:
    """With a listener (the SSE stream), the answer's words go out as ``delta`` events while the
    model writes them; the reply event that follows verification is still the one that counts."""
    if not ctx.trace.listening:
        return None
    return JsonStringField("answer", lambda text: ctx.trace.emit("delta", {"text": text})).feed


def _cite(chunk: Any | None) -> dict | None:
    return {"file": chunk.file, "page": chunk.page} if chunk is not None else None

