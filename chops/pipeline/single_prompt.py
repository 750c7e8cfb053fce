"""The ablation without a classifier (architecture ``executor_only``): one prompt decides answer-or-operation."""

from __future__ import annotations

from chops.pipeline.context import Candidate, TurnContext
from chops.pipeline.demonstrations import demonstrations_section
from chops.pipeline.executor import Executor
from chops.pipeline.prompting import messages
from chops.pipeline.schemas import ANSWER_DIRECTLY, proposal_schema


def answer_or_operate(executor: Executor, ctx: TurnContext) -> Candidate:
    """One call: an answer from the guides and profile, or one operation call run as ``Executor.run_plan`` runs it."""
    chunks, rendered = executor.retriever.long_text(ctx)
    choices, listed = executor.offer(ctx)
    msgs = messages("pipeline_execute_only", static={"operations": executor.static_operations},
                    shortlist=listed, history=ctx.history_section(), feedback=ctx.feedback_section(),
                    profile=ctx.profile_text(), chunks=rendered, request=ctx.text,
                    demonstrations=demonstrations_section(ctx.demonstrations, "only"))
    schema = proposal_schema(choices, with_answer=True)
    out, step = ctx.trace.call("executor", lambda lg: executor.llm.structured(
        "executor", msgs, schema, ledger=lg), route=None)
    call = out.call
    if call.operation == ANSWER_DIRECTLY:
        step.update(route="guide", answer=call.answer)
        return Candidate(iteration=ctx.trace.iteration, route="guide", answer=call.answer)
    step["route"] = "system"
    return executor.run_plan(ctx, [(call.operation, call.args.model_dump(by_alias=True))], step)
