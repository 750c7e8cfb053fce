"""The executor: one prompt per route, producing a ``Candidate``.

basic_info answers from the profile; guide answers from long excerpts and cites one of them; system
works in steps: each step the model proposes a plan of typed operation calls (one, unless the user asked
for several changes). While the plan holds only look-ups (reads the pack marks ``observe``), they run and
their results are shown to the next step (``chops.pipeline.lookups``), up to ``executor_steps`` steps;
otherwise its argument values are grounded — in the user's own words or in what a look-up returned —
and the Api runs it: the writes together as one dry-run plan, reads normally. A pack without look-ups
gets exactly one step (the model's first plan is the proposal), with the same prompt and schema as ever.

Each step's grammar lets an id argument take only the ids the profile and the look-ups so far listed, or the
customer typed (``.choices``): the model copies ids, it cannot invent them. It offers no write whose ids no look-up
has listed yet while a look-up is offered (``lookups.looked_up_first``), nor one the customer's words do not ask for
(``Operation.asked_by``). A plan is repaired (``.repairs``); a swap the request does not ask for is refused and
redone (``.kinds``); agenda requests about the order read join (``.together``); which line, or which new item where
the customer asked to hear the options, is asked (``.which``, ``.listing``).

Tool retrieval (``tools``, ``chops.pipeline.tools``): the plan schema lets the model call only the turn's short list
of operations. ``layout`` says where the list is shown: ``cached`` keeps the whole list in the static system part (the
engine caches it per role: reading it costs nothing per turn) and only narrows the grammar; ``inline`` puts the short
list in the user part and leaves it out of the system part: the cheaper choice where nothing caches the prompt head.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chops.domain.operations import Operation, operation_lines
from chops.domain.outcomes import Outcome
from chops.domain.system import SystemApi
from chops.domain.values import slots
from chops.llm import LLM
from chops.llm.streaming import JsonStringField
from chops.pipeline.asking import only_asks
from chops.pipeline.context import Candidate, Step, TurnContext
from chops.pipeline.choices import arg_options
from chops.pipeline.completion import named_options, still_replaced
from chops.pipeline.demonstrations import demonstrations_section
from chops.pipeline.everything import everything
from chops.pipeline.fanout import covered, fan_out
from chops.pipeline.fields import asks_sum, sums_asked
from chops.pipeline.grounding import ground_args
from chops.pipeline.read.reader import TypedReader
from chops.pipeline.kinds import another_kind, no_swap_asked
from chops.pipeline.listing import listed_first
from chops.pipeline.lookups import (Reader, conversation_lookups, follow_ups, looked_up, looked_up_first, lookup_record,
                                    listed_named, observations_section, results, seen_data, unread_named,
                                    unread_sources)
from chops.pipeline.prompting import fragment, messages, section, without_instructions
from chops.pipeline.refusals import refuse
from chops.pipeline.repairs import not_of_sources, of_the_other, repaired
from chops.pipeline.retrieval import Retriever
from chops.pipeline.schemas import ANSWER_DIRECTLY, GuideAnswer, ProfileAnswer, plan_schema
from chops.pipeline.together import taken_along
from chops.pipeline.tools import ToolRanker
from chops.pipeline.undo import undoing
from chops.pipeline.walk import stems, typed_ids
from chops.pipeline.which import ask, read_elsewhere


class Executor:
    """Carries out a route for a turn; never commits (the agent does, after verification)."""

    def __init__(self, llm: LLM, api: SystemApi, retriever: Retriever, operations: Mapping[str, Operation],
                 operations_text: str, *, steps: int = 8, tools: ToolRanker | None = None,
                 layout: str = "cached", id_choices: bool = True, guide_profile: str = "always",
                 reading: str = "steps") -> None:
        """``steps``: the model steps one attempt on the operations route may take (look-ups, then the plan);
        ``tools`` (None: every operation, always) picks each turn's short list; ``layout`` (``cached`` or
        ``inline``) says where the prompt shows it (module docstring); ``id_choices``: id arguments are
        picked among the ids seen (``chops.pipeline.choices``); ``guide_profile``: when a guide answer's
        prompt holds the profile (``Settings.guide_profile``); ``reading``: ``typed``, the operations route reads each
        message into one typed request (``chops.pipeline.read``), ``steps`` the plan of calls below."""
        self.llm = llm
        self.api = api
        self.retriever = retriever
        self.operations = operations
        self.operations_text = operations_text
        self.choices = tuple(operations.values())  # what the plan schema lets the model call
        self.observing = any(op.observe and not op.writes for op in self.choices)
        self.steps = steps if self.observing else 1
        self.tools = tools if tools is not None and tools.top_k > 0 else None  # k 0: every operation, as ever
        self.inline = self.tools is not None and layout == "inline"
        self.guide_profile = guide_profile
        self.id_choices = id_choices
        self.typed = TypedReader(llm, api, operations, steps=max(steps, 2)) if reading == "typed" else None
        # A business whose operations take dates reads them against its clock: its prompt says what today is.
        self.dated = any(slot.kind == "date" for op in self.choices for slot in slots(op.args_model))

    def _profile(self, ctx: TurnContext) -> str:
        """The profile for the operations prompt, with what today is where the operations take dates."""
        if not self.dated or ctx.now is None:
            return ctx.profile_text()
        return f"{ctx.profile_text()}\n{ctx.today_line()}"

    @property
    def static_operations(self) -> str:
        """What the static system part shows for ``$operations`` (and what a warm start caches)."""
        return fragment("operations_inline") if self.inline else self.operations_text

    def offer(self, ctx: TurnContext) -> tuple[tuple[Operation, ...], str]:
        """The operations this turn's plan may call and the user-part section listing them ("" unless the
        layout is inline). The short list is ranked once a turn: its message does not change on a retry."""
        if self.tools is None:
            return self.choices, ""
        if ctx.shortlist is None:
            previous = ctx.history[-1].user_text if ctx.history else None
            ctx.shortlist = self.tools.shortlist(ctx.text, previous)
            ctx.trace.step("tools", shortlist=list(ctx.shortlist), top_k=self.tools.top_k)
        offered = {name: self.operations[name] for name in ctx.shortlist}
        listed = section("operations_listed", operation_lines(offered)) if self.inline else ""
        return tuple(offered.values()), listed

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
        # The profile too, unless the router was sure this is a guide question: one the model classifier wrongly
        # sent here ("am I a team leader?") still gets answered, and a sure one reads ~120 tokens less.
        mine = self.guide_profile == "always" or not ctx.router_sure_of("guide")
        profile = fragment("profile_section", profile=ctx.profile_text()) if mine else ""
        msgs = messages("pipeline_execute_guide", history=ctx.history_section(),
                        feedback=ctx.feedback_section(last=True), profile=profile, chunks=rendered, request=ctx.text,
                        demonstrations=demonstrations_section(ctx.demonstrations, "guide"),
                        language=ctx.language_section())
        out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
            "executor", msgs, GuideAnswer, ledger=lg, on_delta=_answer_stream(ctx)), route="guide")
        source = chunks[out.source - 1] if 1 <= out.source <= len(chunks) else None
        step.update(answer=out.answer, source=_cite(source))
        # No excerpt cited and nothing of the profile said: nothing is behind the model's words (the customer hears
        # that no answer was found). Asked if a lost tablet could be refunded, the 1.5B cited none and answered "Yes,
        # you can" (train task 31); asked who painted the Mona Lisa, it answered from its own knowledge.
        answer = out.answer if source is not None or (profile and stems(out.answer) & stems(ctx.profile_text())) \
            else None
        return Candidate(iteration=ctx.trace.iteration, route="guide", answer=answer, source=source)

    def propose_operation(self, ctx: TurnContext) -> Candidate:
        """Look-ups while the model asks for them, then a plan of typed operation calls (nearly always
        one), grounded and run (see ``run_plan``), or an answer from what the look-ups returned."""
        if self.typed is not None:
            return self.typed.propose(ctx)
        back = undoing(ctx, self.operations)
        if back is not None:  # "change it back": the values its commit replaced, not the model's memory of them
            (name, args), read = back
            return self.run_plan(ctx, [(name, args)], ctx.trace.step("undo", operation=name, args=args), read)
        # What earlier turns read is shown too (asking for it again is a repeat); the list grows with this
        # turn's look-ups, across its attempts.
        lookups = conversation_lookups(ctx)
        reader = Reader(self.api, self.operations, ctx.nickname, lookups, seen_data(ctx, lookups))
        whole = everything(self.operations, covered(ctx), ctx.request_texts, ctx.barred, reader)
        if whole:  # "cancel or return everything I can": the plan of every record, from the data
            step = ctx.trace.step("everything", calls=[{"operation": n, "args": a} for n, a in whole])
            reader.note(step)
            return self.run_plan(ctx, whole, step, lookups)
        choices, listed = self.offer(ctx)
        typed = typed_ids(ctx.user_texts)
        acting = False  # after a look-up already made: the next step may only act or answer
        # A question that names no change is looked up and answered: no write is offered (``kinds.only_asks``).
        asking = self.observing and only_asks(ctx.text, self.choices)
        for n in range(1, self.steps + 1):
            # Each step's grammar offers the ids read so far (chops.pipeline.choices).
            sources = seen_data(ctx, lookups)
            seen = sources if self.id_choices else []  # nothing seen: every id is free text
            # A return or a cancel asked for, and nothing a swap needs: no swap is offered (``kinds.no_swap_asked``).
            swapless = self.observing and no_swap_asked(ctx.text, ctx.user_texts, self.choices, sources)
            read = bool(results(lookups))
            offered = tuple(op for op in choices if _offered(op, ctx, acting, asking, swapless, read)) \
                or (() if asking else choices)
            options = named_options(offered, arg_options(offered, seen, typed, ctx.text, ctx.user_texts,
                                                         ctx.request_texts[1:]), seen, ctx.user_texts,
                                    still_replaced(offered, ctx.replaced, seen, ctx.message))
            if n < self.steps:
                offered = looked_up_first(offered, options)
            schema = plan_schema(offered, self.observing and ctx.instead is None, options)  # a redo's write: no answer
            sums = sums_asked(ctx.text, lookups) if asking else []  # a question's only (``fields.sums_asked``)
            msgs = messages("pipeline_execute_system", static={"operations": self.static_operations},
                            shortlist=listed, history=ctx.history_section(),
                            feedback=ctx.feedback_section(last=True), profile=self._profile(ctx), request=ctx.text,
                            demonstrations=demonstrations_section(ctx.demonstrations, "system"),
                            observations=observations_section(lookups, sums), language=ctx.language_section())
            out, step = ctx.trace.call("executor", lambda lg: self.llm.structured(
                "executor", msgs, schema, ledger=lg), route="system", step=n, **({"asking": True} if asking else {}))
            calls = [(c.operation, c.args.model_dump(by_alias=True)) for c in out.calls
                     if c.operation != ANSWER_DIRECTLY]
            # Asked a sum ("all my grills"), every record holding what it names is read; a record whose value a write
            # is to take ("the same address as order #W…"), before the write.
            unread = [] if n == self.steps else unread_sources(choices, sources, lookups, ctx.text) if calls else \
                unread_named(choices, sources, lookups, ctx.text, asking and asks_sum(ctx.text)) \
                or listed_named(choices, ctx, lookups, self.api)
            if unread and self._look_up(ctx, unread, lookups, step):  # not answered before the record named is read
                acting = step["read_first"] = True
                continue
            if not calls:  # an answer from the look-ups (only offered when the pack has look-ups)
                answer = next(c.answer for c in out.calls if c.operation == ANSWER_DIRECTLY)
                step["answer"] = answer = without_instructions(answer) if ctx.feedback else answer
                return Candidate(iteration=ctx.trace.iteration, route="system", answer=answer, lookups=list(lookups),
                                 sums=sums)
            if n == self.steps or not all(self.operations[name].observe for name, _ in calls):
                return self.run_plan(ctx, calls, step, lookups)
            if not self._look_up(ctx, calls, lookups, step):
                if acting:
                    break
                # The same look-ups again: what it needs is already shown (a 1.5B model read the same order
                # until the budget ran out), so the next step's grammar offers only writes and the answer.
                acting = True
                step["repeated"] = True
        ctx.trace.step("steps_exhausted", steps=self.steps, lookup_count=len(lookups))
        return Candidate(iteration=ctx.trace.iteration, route="system", lookups=list(lookups))

    def _look_up(self, ctx: TurnContext, calls: list[tuple[str, dict[str, Any]]], lookups: list[Step],
                 step: dict[str, Any]) -> bool:
        """Run the new look-ups of ``calls`` as the sender (grounded like any call); False when none was new."""
        known = looked_up(ctx, lookups)
        # Not for a request of another kind than a swap: shown a product's variants, the 1.5B model asked to return an
        # air purifier proposed its exchange (train tasks 46, 48).
        following = another_kind(ctx.text, self.choices) is None
        fresh: list[Step] = []
        queue = [(name, proposed, False) for name, proposed in calls]
        while queue:
            name, proposed, followed = queue.pop(0)
            # A follow-up's id comes from the result just read (``follows``), not from the model: as it stands.
            if name not in self.operations:
                continue
            op = self.operations[name]
            args, dropped = (proposed, []) if followed else ground_args(proposed, ctx.user_texts, known,
                                                                        op.args_model, ctx.now)
            if any((s.operation, s.args) == (name, args) for s in lookups + fresh):
                continue
            result = self.api.call(name, ctx.nickname, args)
            fresh.append(Step(operation=name, proposed_args=proposed, args=args, dropped=dropped,
                              description=op.description, result=result))
            if result.outcome.succeeded and following:
                queue += [(n, a, True) for n, a in follow_ups(op, result.data, ctx.text)]
            if not queue:  # the agenda's requests about other lines of the record read join this one
                queue = [(n, a, True) for n, a in taken_along(ctx, fresh, self.choices, self.operations)]
        lookups.extend(fresh)
        # The result's data is kept with the turn: a later turn of the conversation may take ids from it.
        step["lookups"] = [lookup_record(s) for s in fresh]
        return bool(fresh)

    def run_plan(self, ctx: TurnContext, calls: list[tuple[str, dict[str, Any]]],
                 step: dict[str, Any], lookups: list[Step] | None = None) -> Candidate:
        """Repair and ground every call (``chops.pipeline.repairs``) and run it for the caller: reads for real, the
        writes together as ONE dry-run plan (``Api.call_plan``), so a later write sees an earlier one's effect.

        A repeated call is dropped. Where the plan's writes may not run at all (the request is about someone else, a
        swap it does not ask for…: ``chops.pipeline.refusals``), no step runs."""
        steps: list[Step] = []
        read = conversation_lookups(ctx) if lookups is None else lookups
        known, seen = looked_up(ctx, read), seen_data(ctx, read)
        lookups = lookups or []
        for name, proposed in of_the_other(self.operations, calls, ctx.text, step):  # not the source's change
            s = repaired(self.operations, ctx, name, proposed, known, seen, step)
            if not any((t.operation, t.args) == (s.operation, s.args) for t in steps):  # the same call twice: one
                steps.append(s)
        steps = not_of_sources(steps, ctx.text, step)  # "the same address as order #W…": that order is not changed
        reader = Reader(self.api, self.operations, ctx.nickname, lookups, seen)  # records a repair reads for itself
        steps = fan_out(self.api, self.operations, ctx, steps, reader, step)  # "all my pending orders"
        # The request's words with its earlier messages: "refund it to my gift card then" after "return the more
        # expensive tablet" was refused is not asked which tablet (train task 83).
        request = "\n".join(ctx.request_texts)
        moved = read_elsewhere(reader, self.operations, [s for s in steps if s.writes], request, ctx.user_texts)
        if moved:  # the line the customer described
            step.setdefault("meant", []).extend(moved)
        steps, others, refused = refuse(self.api, self.operations, self.choices, ctx, steps, seen)  # not run at all
        writes = [s for s in steps if s.writes]
        # Which line, of a product held several times, or which new item, the customer asked to choose: asked first.
        which = None if refused else (ask(self.operations, writes, request, ctx.user_texts, seen)
                                      or listed_first(self.operations, writes, ctx, seen))
        plan = None
        # The acting user is ctx.nickname, set by the caller from the session — never a model value.
        if which is not None:  # the question alone: the answer completes this call (``repairs._kept``)
            s, asked = which
            s.args, s.result, steps = {**s.args, **dict.fromkeys(asked.unset)}, asked.result(s.operation), [s]
        elif not refused:
            for s in steps:
                if not s.writes:
                    s.result = self.api.call(s.operation, ctx.nickname, s.args)
            if writes:
                plan = self.api.call_plan(ctx.nickname, [(s.operation, s.args) for s in writes], dry_run=True)
                for s, result in zip(writes, plan.steps):
                    # More is asked for only of a record the customer holds: asked to cancel a friend's order by its
                    # id, the customer was asked for a reason, turn after turn (our own conversations).
                    missing = result.outcome == Outcome.REFUSED_MISSING_ARGS
                    s.result = (missing and reader.unheld(self.operations[s.operation], s.args)) or result
        reader.note(step)
        records = [s.record(ctx.nickname, others) for s in steps]
        step.update(records[0], steps=records)
        return Candidate(iteration=ctx.trace.iteration, route="system", steps=steps, plan=plan, lookups=list(lookups))


def _offered(op: Operation, ctx: TurnContext, acting: bool, asking: bool, swapless: bool, read: bool) -> bool:
    """Whether this step offers ``op``: not barred this turn; no look-up once one was repeated (``acting``); no
    write for a question (``asking``); no swap where none was asked for (``swapless``); nothing to be called after a
    look-up before one returned a record (``read``, ``Operation.after_lookup``); a redo's look-ups and its one write
    only (``ctx.instead``); and only a write the request may be asking for (``Operation.asked_in``)."""
    return (op.name not in ctx.barred and not (acting and op.observe) and not (asking and op.writes)
            and (read or not op.after_lookup)
            and not (swapless and op.choice_pairs()) and (ctx.instead is None or op.observe or op.name == ctx.instead)
            and op.asked_in(ctx.request_texts, ctx.message or ctx.text))


def _answer_stream(ctx: TurnContext) -> Callable[[str], None] | None:
    """With a listener (the SSE stream), the answer's words go out as ``delta`` events while the
    model writes them; the reply event that follows verification is still the one that counts."""
    if not ctx.trace.listening:
        return None
    return JsonStringField("answer", lambda text: ctx.trace.emit("delta", {"text": text})).feed


def _cite(chunk: Any | None) -> dict | None:
    return {"file": chunk.file, "page": chunk.page} if chunk is not None else None

