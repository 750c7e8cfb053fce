"""``TypedReader``: the operations route as one typed reading a step (``chops.pipeline.read``).

A step asks the model, under the reading's grammar, what the message asks (``schema.reading_schema``): look-ups it
needs (run at once; their results are shown to the next step), the operation it wants with the values the customer
gave, or an answer from what was looked up. Code does the rest: the values are merged into the request of the
conversation (``request``), grounded by their kinds against the customer's words, the look-ups and the clock
(``chops.domain.values``); the request is asked about while a required value is missing at any depth, refused when
it names another person, else dry-run as the write the verifier scores and the customer confirms.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chops.domain.operations import Operation, operation_lines
from chops.domain.outcomes import Outcome, OperationResult
from chops.domain.system import SystemApi
from chops.domain.values import KINDS, missing, values
from chops.llm import LLM
from chops.pipeline.context import Candidate, Step, TurnContext
from chops.pipeline.grounding import ground_args
from chops.pipeline.lookups import (conversation_lookups, lookup_record, looked_up, observations_section,
                                    seen_data)
from chops.pipeline.prompting import fragment, messages
from chops.pipeline.read.request import ROLE, Request, asked_again, merged, restore
from chops.pipeline.read.schema import id_options, reading_schema
from chops.pipeline.targets import others_named, refusal
from chops.pipeline.walk import typed_ids

PROMPT = "pipeline_read"
ASKED_AT_MOST = 2  # turns in a row that may ask for the same missing values before a person takes over


class TypedReader:
    """Reads a message on the operations route into look-ups, one write or an answer (the module docstring)."""

    def __init__(self, llm: LLM, api: SystemApi, operations: Mapping[str, Operation], *, steps: int = 4) -> None:
        """``steps``: the readings one attempt may take (each after the look-ups the one before asked for)."""
        self.llm, self.api, self.operations, self.steps = llm, api, operations, steps
        self.choices = tuple(operations.values())
        self.operations_text = "\n".join(operation_lines(operations))

    def propose(self, ctx: TurnContext) -> Candidate:
        """Look-ups while a reading asks for them, then the request's write, a question for what it misses, or an
        answer."""
        lookups = conversation_lookups(ctx)
        request = restored = restore(ctx.history)
        carried = request is not None  # the request the last turn asked about, until a reading shows it is not
        acting = False  # a reading asked for nothing new: the next may only answer
        only: Operation | None = None  # the write whose record was just read: the next reading completes it
        for n in range(1, self.steps + 1):
            calls = self._read(ctx, request, lookups, n, acting, only)
            answer = next((c.answer for c in calls if c.operation == "AnswerDirectly"), None)
            reads = [c for c in calls if c.operation in self.operations and not self.operations[c.operation].writes]
            write = next((c for c in calls if c.operation in self.operations
                          and self.operations[c.operation].writes), None)
            if write is not None:
                op = self.operations[write.operation]
                given = write.args.model_dump(by_alias=True)
                if carried and only is None and op.name != request.operation and n < self.steps:
                    # An answer to the question completes the request asked about: read once more, held to it
                    # ("I'm sick", the reason asked for a cancel, was read as a change of the reservation's flights).
                    only = self.operations[request.operation]
                    continue
                if carried and n < self.steps and not self._answers(ctx, op, request, given, lookups):
                    # The message answers nothing the request asked ("upgrade everyone and add two bags" after
                    # "the passengers' names?"; "pay the way I paid before" after "how many bags?", asked
                    # fifteen times): it is read again as the new request it is, without the old one.
                    ctx.trace.step("request_dropped", operation=request.operation)
                    request, carried = None, False
                    continue
                request, carried = merged(request, op, given), False
                needed = self._needed(op, request, lookups)
                if needed and n < self.steps:
                    # The record a write is about is read before it: "her date of birth stays the same" is the
                    # reservation's, which the next reading copies. That reading completes the same write: shown the
                    # reservation, the 1.5B turned a cancel into a change of its flights.
                    self._look_up(ctx, needed, lookups)
                    missing_record = self._not_found(needed, lookups)
                    if missing_record is not None:
                        # No such record of the customer's: that is the answer, not a question for more values (a
                        # flight number taken for a reservation's was asked about until the turns ran out).
                        return self._refused(ctx, op, request, missing_record, lookups)
                    only = op
                    continue
                return self._propose(ctx, op, request, lookups, answered(op, request, asked_for(op, restored)))
            if reads and n < self.steps:
                # The same look-ups again: what they show is in the prompt already (the 1.5B read one reservation
                # until the steps ran out, never answering), so the next reading may only answer: offered a write
                # too, it read a question about the bag allowance as adding bags. A write asked for is proposed
                # before its record is read (the reader reads it: ``_needed``).
                acting = not self._look_up(ctx, [(c.operation, c.args.model_dump(by_alias=True)) for c in reads],
                                           lookups)
                continue
            if answer is not None:
                return Candidate(iteration=ctx.trace.iteration, route="system", answer=answer, lookups=list(lookups))
            break
        ctx.trace.step("steps_exhausted", steps=self.steps, lookup_count=len(lookups))
        return Candidate(iteration=ctx.trace.iteration, route="system", lookups=list(lookups))

    def _read(self, ctx: TurnContext, request: Request | None, lookups: list[Step], n: int,
              acting: bool = False, only: Operation | None = None) -> list[Any]:
        """One reading: the calls the model gives for the message, the request so far and the look-ups (``acting``:
        the answer only; ``only``: that write alone)."""
        so_far = fragment("request_so_far", request=request.describe()) if request is not None else ""
        today = ctx.today_line() + "\n" if ctx.now else ""
        msgs = messages(PROMPT, static={"operations": self.operations_text}, history=ctx.history_section(),
                        profile=ctx.profile_text(), today=today, request_so_far=so_far, request=ctx.text,
                        observations=observations_section(lookups), feedback=ctx.feedback_section(last=True),
                        language=ctx.language_section())
        offered = (only,) if only is not None else () if acting else self.choices
        options = id_options(offered, seen_data(ctx, lookups), typed_ids(ctx.user_texts))
        out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
            "executor", msgs, reading_schema(offered, options), ledger=lg), route="system", step=n, reading=True,
            **({"acting": True} if acting else {}))
        step["calls"] = [c.model_dump(by_alias=True) for c in out.calls]
        return list(out.calls)

    def _answers(self, ctx: TurnContext, op: Operation, request: Request, given: dict[str, Any],
                 lookups: list[Step]) -> bool:
        """Whether the values ``given`` for the carried ``request`` fill something it missed, once grounded."""
        if op.name != request.operation:
            return True
        new = merged(request, op, given)
        known = looked_up(ctx, lookups) | set(answered(op, new, asked_for(op, request)))
        seen = seen_data(ctx, lookups)
        before = ground_args(request.args, ctx.user_texts, known, op.args_model, ctx.now, seen)[0]
        return ground_args(new.args, ctx.user_texts, known, op.args_model, ctx.now, seen)[0] != before

    def _needed(self, op: Operation, request: Request, lookups: list[Step]) -> list[tuple[str, dict[str, Any]]]:
        """The look-ups ``op`` needs (``Operation.needs``) that take arguments the request holds (the reservation's
        id) and were not made with them yet."""
        calls = []
        for name in op.needs:
            read = self.operations.get(name)
            takes = read.arg_names() if read is not None else ()
            if not takes or any(request.args.get(arg) in (None, "", []) for arg in takes):
                continue
            args = {arg: request.args[arg] for arg in takes}
            if not any(s.operation == name and s.args == args for s in lookups):
                calls.append((name, args))
        return calls

    def _not_found(self, reads: list[tuple[str, dict[str, Any]]], lookups: list[Step]) -> OperationResult | None:
        """The refusal of the first of ``reads`` (as run in ``lookups``) that found nothing, or None."""
        for name, args in reads:
            step = next((s for s in reversed(lookups) if s.operation == name and s.proposed_args == args), None)
            if step is not None and step.result is not None and not step.result.outcome.succeeded:
                return step.result
        return None

    def _refused(self, ctx: TurnContext, op: Operation, request: Request, result: OperationResult,
                 lookups: list[Step]) -> Candidate:
        """The write of ``request`` refused with the look-up's ``result`` (its record is not the customer's)."""
        step = Step(operation=op.name, proposed_args=request.args, args=request.args, writes=True,
                    description=op.description, result=result.model_copy(update={"operation": op.name}))
        return _written(ctx, step, None, lookups, [], record_not_found=True)

    def _look_up(self, ctx: TurnContext, reads: list[tuple[str, dict[str, Any]]], lookups: list[Step]) -> bool:
        """Run the reads not run yet with the same values (grounded like any call); False when none was new."""
        known = looked_up(ctx, lookups)
        fresh: list[Step] = []
        for name, proposed in reads:
            op = self.operations[name]
            args, dropped = ground_args(proposed, ctx.user_texts, known, op.args_model, ctx.now)
            if any((s.operation, s.args) == (op.name, args) for s in lookups + fresh):
                continue
            fresh.append(Step(operation=op.name, proposed_args=proposed, args=args, dropped=dropped,
                              description=op.description, result=self.api.call(op.name, ctx.nickname, args)))
        lookups.extend(fresh)
        # Kept with the turn: a later turn grounds values in them and shows them again (``earlier_lookups``).
        ctx.trace.step("lookups", lookups=[lookup_record(s) for s in fresh])
        return bool(fresh)

    def _propose(self, ctx: TurnContext, op: Operation, request: Request, lookups: list[Step],
                 answers: list[str]) -> Candidate:
        """The request's write: grounded (``answers``: the choices the customer gave when asked for them, as read),
        then asked about, refused or dry-run."""
        known = looked_up(ctx, lookups) | set(answers)
        args, dropped = ground_args(request.args, ctx.user_texts, known, op.args_model, ctx.now,
                                    seen_data(ctx, lookups))
        kept = Request(op.name, args)
        ctx.trace.step(ROLE, **kept.record(), dropped=dropped)
        step = Step(operation=op.name, proposed_args=request.args, args=args, dropped=dropped, writes=True,
                    description=op.description)
        plan = None
        gaps = missing(op.args_model, args)
        others = [] if gaps else others_named(self.api, ctx, args, [s.result.data for s in lookups
                                                                    if s.result is not None])
        if gaps and asked_again(ctx.history, op, [p for p, _ in gaps]) >= ASKED_AT_MOST:
            # The same question a third time: the answers do not fill it ("pay the way I paid before" to "how
            # many bags?", until the turns ran out); a person takes over.
            ctx.trace.step("asked_again", operation=op.name, missing=[".".join(map(str, p)) for p, _ in gaps])
            return Candidate(iteration=ctx.trace.iteration, route="handoff", typed=True)
        if gaps:
            step.result = asking(op, gaps)
        elif others:
            step.result = refusal(op.name, ctx.nickname, others)
        else:
            plan = self.api.call_plan(ctx.nickname, [(op.name, args)], dry_run=True)
            step.result = plan.steps[0]
        return _written(ctx, step, plan, lookups, others)


def _written(ctx: TurnContext, step: Step, plan: Any, lookups: list[Step], others: list[str],
             **noted: Any) -> Candidate:
    """The candidate of the request's write ``step`` (its result set), recorded in the trace."""
    record = step.record(ctx.nickname, others)
    ctx.trace.step("plan", **record, steps=[record], **noted)
    return Candidate(iteration=ctx.trace.iteration, route="system", steps=[step], plan=plan, lookups=list(lookups),
                     typed=True)


def asking(op: Operation, gaps: list[tuple[tuple[Any, ...], Any]]) -> OperationResult:
    """The result of a write still missing values: which ones (``data["missing"]``: their paths, in field order)."""
    names = [".".join(str(p) for p in path) for path, _ in gaps]
    return OperationResult(operation=op.name, outcome=Outcome.REFUSED_MISSING_ARGS, data={"missing": names},
                           message=f"{op.name} needs {', '.join(names)}; please provide it.")


def asked_for(op: Operation, request: Request | None) -> set[tuple[Any, ...]]:
    """The paths of the choices the last turn asked for: the request's missing ones, if it is ``op``'s."""
    if request is None or request.operation != op.name:
        return set()
    return {path for path, _ in missing(op.args_model, request.args)}


def answered(op: Operation, request: Request, asked: set[tuple[Any, ...]]) -> list[str]:
    """The values the request now holds at the ``asked`` paths of slots of a closed set (a choice, a pack's kind with
    ``choices``): the customer's answer to "the reason for cancelling?" ("I'm sick", 我生病了) is the model's reading of
    it, one of the set; it is not asked again. Not where the pack gives the words that name each value: a reason that
    makes a refund due is the customer's words' (a family celebration was read as health, and the insurance
    refunded it)."""
    return [str(value) for path, slot, value in values(op.args_model, request.args)
            if (slot.kind == "choice" or KINDS.get(slot.kind, KINDS["text"]).choices) and not slot.options.get("words")
            and value is not None and tuple(path) in asked]
