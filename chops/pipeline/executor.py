"""The executor: one prompt per route, producing a ``Candidate``.

basic_info answers from the profile; guide answers from long excerpts and cites one of them; system
returns a plan of typed operation calls (one, unless the user asked for several changes), whose
argument values are then grounded in the user's own words before the Api runs them — the writes
together as one dry-run plan, reads normally.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chops.domain.operations import Operation
from chops.domain.system import SystemApi
from chops.llm import LLM
from chops.llm.streaming import JsonStringField
from chops.pipeline.context import Candidate, Step, TurnContext
from chops.pipeline.demonstrations import demonstrations_section
from chops.pipeline.grounding import ground_args
from chops.pipeline.prompting import messages
from chops.pipeline.retrieval import Retriever
from chops.pipeline.schemas import ANSWER_DIRECTLY, GuideAnswer, ProfileAnswer, plan_schema, proposal_schema
from chops.pipeline.targets import others_named, refusal


class Executor:
    """Carries out a route for a turn; never commits (the agent does, after verification)."""

    def __init__(self, llm: LLM, api: SystemApi, retriever: Retriever, operations: Mapping[str, Operation],
                 operations_text: str) -> None:
        self.llm = llm
        self.api = api
        self.retriever = retriever
        self.operations = operations
        self.operations_text = operations_text
        self.choices = tuple(operations.values())  # what the plan schema lets the model call

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
                        feedback=ctx.feedback_section(), profile=ctx.profile_text(), request=ctx.text,
                        language=ctx.language_section())
        out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
            "executor", msgs, ProfileAnswer, ledger=lg, on_delta=_answer_stream(ctx)), route="basic_info")
        step["answer"] = out.answer
        return Candidate(iteration=ctx.trace.iteration, route="basic_info", answer=out.answer)

    def answer_guide(self, ctx: TurnContext) -> Candidate:
        """Answer from the long guide excerpts, citing the one used."""
        chunks, rendered = self.retriever.long_text(ctx)
        # The profile too: a question level 1 wrongly sent here ("am I a team leader?") still gets answered.
        msgs = messages("pipeline_execute_guide", history=ctx.history_section(), feedback=ctx.feedback_section(),
                        profile=ctx.profile_text(), chunks=rendered, request=ctx.text,
                        demonstrations=demonstrations_section(ctx.demonstrations, "guide"),
                        language=ctx.language_section())
        out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
            "executor", msgs, GuideAnswer, ledger=lg, on_delta=_answer_stream(ctx)), route="guide")
        source = chunks[out.source - 1] if 1 <= out.source <= len(chunks) else None
        step.update(answer=out.answer, source=_cite(source))
        return Candidate(iteration=ctx.trace.iteration, route="guide", answer=out.answer, source=source)

    def propose_operation(self, ctx: TurnContext) -> Candidate:
        """A plan of typed operation calls (nearly always one), grounded, then run (see ``run_plan``)."""
        msgs = messages("pipeline_execute_system", static={"operations": self.operations_text},
                        history=ctx.history_section(), feedback=ctx.feedback_section(), request=ctx.text,
                        demonstrations=demonstrations_section(ctx.demonstrations, "system"))
        schema = plan_schema(self.choices)
        out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
            "executor", msgs, schema, ledger=lg), route="system")
        return self.run_plan(ctx, [(c.operation, c.args.model_dump(by_alias=True)) for c in out.calls], step)

    def executor_only(self, ctx: TurnContext) -> Candidate:
        """The ablation without a classifier: one prompt decides answer-or-operation (one call)."""
        chunks, rendered = self.retriever.long_text(ctx)
        msgs = messages("pipeline_execute_only", static={"operations": self.operations_text},
                        history=ctx.history_section(), feedback=ctx.feedback_section(),
                        profile=ctx.profile_text(), chunks=rendered, request=ctx.text,
                        demonstrations=demonstrations_section(ctx.demonstrations, "only"))
        schema = proposal_schema(self.choices, with_answer=True)
        out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
            "executor", msgs, schema, ledger=lg), route=None)
        call = out.call
        if call.operation == ANSWER_DIRECTLY:
            step.update(route="guide", answer=call.answer)
            return Candidate(iteration=ctx.trace.iteration, route="guide", answer=call.answer)
        step["route"] = "system"
        return self.run_plan(ctx, [(call.operation, call.args.model_dump(by_alias=True))], step)

    def run_plan(self, ctx: TurnContext, calls: list[tuple[str, dict[str, Any]]],
                 step: dict[str, Any]) -> Candidate:
        """Ground every call and run it for the caller: reads for real, the writes together as ONE
        dry-run plan (``Api.call_plan``), so a later write sees an earlier one's effect.

        A repeated call is dropped. When the request names another member as the target of any write
        (``chops.pipeline.targets``), no step runs at all: every write is refused, and the reads too,
        since the request is about someone else."""
        steps: list[Step] = []
        for name, proposed in calls:
            args, dropped = ground_args(proposed, ctx.user_texts)
            if any((s.operation, s.args) == (name, args) for s in steps):
                continue  # the same call twice is one change
            op = self.operations[name]
            steps.append(Step(operation=name, proposed_args=proposed, args=args, dropped=dropped,
                              writes=bool(op.writes), description=op.description))
        writes = [s for s in steps if s.writes]
        others: list[str] = []
        for s in writes:
            others += [who for who in others_named(self.api, ctx, s.args) if who not in others]
        plan = None
        # The acting user is ctx.nickname, set by the caller from the session — never a model value.
        if others:
            for s in steps:
                s.result = refusal(s.operation, ctx.nickname, others)
        else:
            for s in steps:
                if not s.writes:
                    s.result = self.api.call(s.operation, ctx.nickname, s.args)
            if writes:
                plan = self.api.call_plan(ctx.nickname, [(s.operation, s.args) for s in writes], dry_run=True)
                for s, result in zip(writes, plan.steps):
                    s.result = result
        records = [_step_record(s, ctx.nickname, others) for s in steps]
        step.update(records[0], steps=records)
        return Candidate(iteration=ctx.trace.iteration, route="system", steps=steps, plan=plan)


def _step_record(s: Step, nickname: str, others: list[str]) -> dict[str, Any]:
    """What the trace keeps of one step (the first step's fields also sit at the top, as before plans)."""
    res = s.result
    return {"operation": s.operation, "proposed_args": s.proposed_args, "args": s.args, "ungrounded": s.dropped,
            "writes": s.writes, "target": nickname if s.writes else None, "others_named": others,
            "dry_run": res.dry_run, "outcome": str(res.outcome), "message": res.message,
            "diff": [c.model_dump() for c in res.diff]}


def _answer_stream(ctx: TurnContext) -> Callable[[str], None] | None:
    """With a listener (the SSE stream), the answer's words go out as ``delta`` events while the
    model writes them; the reply event that follows verification is still the one that counts."""
    if not ctx.trace.listening:
        return None
    return JsonStringField("answer", lambda text: ctx.trace.emit("delta", {"text": text})).feed


def _cite(chunk: Any | None) -> dict | None:
    return {"file": chunk.file, "page": chunk.page} if chunk is not None else None

