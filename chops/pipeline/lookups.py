"""Look up, then act: what the operations executor has read this turn, as the next step's prompt sees it
and as grounding counts it.

A pack marks a read ``observe`` when its result is something to act on (an order's items, a product's
variants) rather than the answer itself. The executor runs such reads, shows their compact results in its
next prompt, and proposes the next call, the write(s) or the answer. A value any of them returned, in this
turn or an earlier one of the conversation (or one of the profile's ``grounding_values``), may then be an
argument though the user never typed it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from chops.domain.operations import Operation
from chops.domain.outcomes import OperationResult, Outcome
from chops.domain.system import SystemApi
from chops.pipeline.context import Step, TurnContext, dumps
from chops.pipeline.described import descriptions
from chops.pipeline.prompting import clip, fragment, section
from chops.pipeline.walk import mentioned, mentions, only_alike, record_fields, records, singular, values_in

# Characters of one look-up's result in the next prompt: an order's lines, a product's variants, and the shop's
# whole product list (1,492 characters; at 900 "T-Shirt" was cut off and the model never saw its id).
RESULT_CLIP = 1500
OBSERVATIONS_CLIP = 3600  # all of them (~1,100 tokens): the prompt stays inside a 4,096-token context
VALUE_CLIP = 200  # what a look-up says of one value a plan uses (an order's line, a variant's)


def leaves(data: Any) -> set[str]:
    """Every scalar in ``data`` (and every string key: ids are often keys), as text."""
    found: set[str] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found |= {k for k in item if isinstance(k, str)}
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif item is not None and not isinstance(item, bool):
            found.add(str(item))
    return found


def earlier_lookups(ctx: TurnContext) -> list[Step]:
    """The successful look-ups of the conversation's earlier turns (kept in their traces), oldest first, each
    call once (its newest result), since the last turn that committed a write (what they read may have
    changed). The executor starts each turn with them: "only the lamp, then" after the order and the lamp's
    variants were read is proposed from what was read, not from ids alone (a 1.5B model then paired the
    wrong ones), and the verifier sees what the values came from."""
    start = max((i + 1 for i, turn in enumerate(ctx.history) if turn.committed), default=0)
    found: dict[str, Step] = {}
    for turn in ctx.history[start:]:
        for step in (turn.trace or {}).get("steps") or []:
            for lookup in step.get("lookups") or []:
                if lookup.get("data") is None:
                    continue
                name, args = lookup["operation"], lookup.get("args") or {}
                key = dumps([name, args])
                found.pop(key, None)  # re-inserted: the newest result, in the order it was read
                found[key] = Step(operation=name, proposed_args=args, args=args, result=OperationResult(
                    operation=name, outcome=Outcome.OK, message="", data=lookup["data"]))
    return list(found.values())


def conversation_lookups(ctx: TurnContext) -> list[Step]:
    """The turn's look-ups, one list for all its attempts (``TurnContext.lookups``): on first use the earlier
    turns' (``earlier_lookups``); the executor appends this turn's as they run."""
    if ctx.lookups is None:
        ctx.lookups = earlier_lookups(ctx)
    return ctx.lookups


def lookup_record(step: Step) -> dict[str, Any]:
    """What a turn's trace keeps of a look-up it made (a later turn takes ids from its data: ``earlier_lookups``)."""
    ok = step.result is not None and step.result.outcome.succeeded
    return {"operation": step.operation, "args": step.args, "ungrounded": step.dropped, "outcome": step.outcome,
            "data": step.result.data if ok else None}


def results(lookups: Iterable[Step]) -> list[Any]:
    """What the successful ones of ``lookups`` returned."""
    return [s.result.data for s in lookups if s.result is not None and s.result.outcome.succeeded]


def looked_up(ctx: TurnContext, lookups: Iterable[Step]) -> set[str]:
    """The values arguments may take from look-ups: the profile's, and what ``lookups`` (the conversation's:
    ``conversation_lookups``) returned."""
    values = {str(v) for v in ctx.profile.grounding_values()}
    for data in results(lookups):
        values |= leaves(data)
    return values


def seen_data(ctx: TurnContext, lookups: Iterable[Step]) -> list[Any]:
    """What the conversation has read, as data: the profile, then the ``results`` of ``lookups`` (the
    sources ``chops.pipeline.choices`` takes id arguments' values from)."""
    return [ctx.profile.lookup_data(), *results(lookups)]


def follow_ups(op: Operation, data: Any, message: str) -> list[tuple[str, dict[str, Any]]]:
    """The look-ups ``op``'s result calls for (``Operation.follows``): for each record under the key whose name
    ``message`` mentions, the look-up with the record's id. "Exchange the keyboard and the thermostat" after
    the order's look-up reads both products at once: the 1.5B model read one and proposed the exchange of
    both (pairing an item with another product's variant), one model step each otherwise. Where the records are all of
    one name and the message names none but says their word ("the item"), that one is read. The records may be a
    listing of names by id: asked how many water bottles it could buy, the 1.5B listed the products and then read an
    order, not the Water Bottle, and counted 4 where 12 are available (our own conversations)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for records_key, name_key, lookup, id_key in op.follows:
        records = data.get(records_key) if isinstance(data, dict) else None
        if isinstance(records, dict):  # a listing of names by id ({"products": {id: name}}): a record each
            records = [{id_key: k, name_key: v} for k, v in records.items() if isinstance(v, str)]
        records = [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []
        # "change the item of my pending order to red": the records' word ("item") stands for the one product they are
        # of, where the message names none (train task 103: the 1.5B read the item, not its product, and wrote a new
        # item id of its own).
        named = [r for r in records if mentions(message, str(r.get(name_key) or ""))]
        if not named and len({str(r.get(name_key)) for r in records}) == 1 \
                and mentions(message, singular(records_key)):
            named = records
        for record in named:
            if record.get(id_key) is not None:
                call = (lookup, {id_key: record[id_key]})
                if call not in calls:
                    calls.append(call)
    return calls


def observation(n: int, step: Step) -> str:
    """One look-up as the executor's next prompt shows it."""
    res = step.result
    args = ", ".join(f"{k}={v!r}" for k, v in step.args.items())
    shown = clip(dumps(res.data), RESULT_CLIP) if res.outcome.succeeded else f"{res.outcome}: {res.message}"
    return fragment("observation", n=n, operation=step.operation, args=args, result=shown)


def observation_lines(lookups: list[Step]) -> list[str]:
    """The look-ups as prompts show them, at most ``OBSERVATIONS_CLIP`` characters: the first (usually the
    order the request is about) and the newest that fit; their numbers show where some were left out.
    Eight look-ups of up to ``RESULT_CLIP`` each overflowed the local engine's 4,096-token context (the
    call failed and the turn with it)."""
    lines = [observation(i, s) for i, s in enumerate(lookups, 1)]
    if not lines:
        return []
    kept: list[str] = []
    budget = OBSERVATIONS_CLIP - len(lines[0])  # one result is at most RESULT_CLIP: the first always fits
    for line in reversed(lines[1:]):
        if len(line) > budget:
            break
        kept.insert(0, line)
        budget -= len(line)
    return [lines[0], *kept]


def value_lines(lookups: Iterable[Step], steps: Iterable[Step]) -> list[str]:
    """Each argument value of ``steps`` that ``lookups`` returned, with what they say of it ("4953074738: Amazon
    Alexa, black; $226.02; available"), once, in the order of the arguments: what the verifier needs to see
    where a plan's ids came from, in a few lines instead of every result again."""
    said = descriptions(r for data in results(lookups) for r in records(data))
    values: list[str] = []
    for step in steps:
        for value in step.args.values():
            values += [str(v) for v in (value if isinstance(value, list) else [value]) if v is not None]
    # A record's text holds its own id too ("i-blue; desk lamp (blue)"): said once, before the colon.
    return [f"{v}: {clip('; '.join(p for p in said[v].split('; ') if p != v), VALUE_CLIP)}"
            for v in dict.fromkeys(values) if v in said]


def observations_section(lookups: list[Step], sums: Iterable[str] = ()) -> str:
    """The look-ups made so far for this message (``observation_lines``) and the ``sums`` the message asks of them
    (``chops.pipeline.fields.sums_asked``), or "" (then the prompt is exactly as without look-ups)."""
    return section("observations", [*observation_lines(lookups), *(fragment("computed", what=s) for s in sums)])


def looked_up_first(offered: tuple[Operation, ...], options: Any) -> tuple[Operation, ...]:
    """Look up, then act: while a look-up is offered, ``offered`` without the writes an argument of which takes its
    values from look-ups (``CHOICES_FROM``) that none has returned yet. The 1.5B model, asked to swap a speaker before
    the order was read, wrote item ids of its own (from the prompt's examples). Every write was withheld until the
    conversation's first look-up too, measured and dropped: asked to cancel an order, the model, shown the order's
    look-up first, proposed a change of its address (where, offered the cancel at once, it proposed that)."""
    known = {(name, arg) for name, arg, _, _ in options}
    ready = tuple(op for op in offered if not op.writes or all((op.name, arg) in known for arg in op.choice_keys()))
    return ready if any(op.observe for op in ready) else offered


def unread_named(operations: Iterable[Operation], sources: list[Any], lookups: Iterable[Step],
                 message: str, every: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """The look-ups of the records ``message`` names by what they hold (``walk.mentioned``: "the skateboard in my
    order" names the order holding one; of those, the ones whose id it types), with a look-up of one argument that
    takes them, where ``lookups`` has read none of them (``every``: each one it has not read). Asked to make the
    skateboard of a pending order the 28 inch one, the 1.5B, having read another order, wrote "the skateboard is
    already the 28 inch one" without reading the order (it was 31 inch; own5). Asked the total of all their
    bookshelves, it read one of the two orders holding some and answered with that order's (own9)."""
    lookups, out = list(lookups), []
    for op, arg in _record_reads(operations):
        names = op.choice_names()
        fields = record_fields(sources, {names[arg]})[names[arg]]
        named = mentioned(values_in(sources, op.choice_keys()[arg]), fields, message)
        named = [v for v in named if v in message] or named
        read = {s.args.get(arg) for s in lookups if s.operation == op.name}
        if every or read.isdisjoint(named):
            out += [(op.name, {arg: v}) for v in named if v not in read]
    return out


def unread_sources(operations: Iterable[Operation], sources: list[Any], lookups: Iterable[Step],
                   message: str) -> list[tuple[str, dict[str, Any]]]:
    """The look-ups of the records ``message`` types only as the one whose value to take ("the same address as order
    #W…": ``walk.only_alike``) that ``lookups`` has not read, to run before any write: not having read it, the 1.5B
    proposed the customer's default address as "the same" one (train task 78)."""
    alike, lookups, out = only_alike(message), list(lookups), []
    for op, arg in _record_reads(operations) if alike else ():
        read = {s.args.get(arg) for s in lookups if s.operation == op.name}
        held = set(values_in(sources, op.choice_keys()[arg]))
        out += [(op.name, {arg: v}) for v in sorted(alike) if v in held and v not in read]
    return out


def _record_reads(operations: Iterable[Operation]) -> Iterator[tuple[Operation, str]]:
    """The look-ups that read one record by its id (one argument, one the records seen list), with that argument."""
    for op in operations:
        args = op.arg_names()
        if op.observe and not op.writes and len(args) == 1 and args[0] in op.choice_names():
            yield op, args[0]


def listed_named(operations: Iterable[Operation], ctx: TurnContext, lookups: Iterable[Step],
                 api: SystemApi) -> list[tuple[str, dict[str, Any]]]:
    """The listing look-up (one taking no arguments whose ``follows`` reads the records it lists) to run where the
    conversation has run none and the request names a record only it lists, one the customer's own records (the
    profile) do not name: asked how many water bottles they could buy, the 1.5B answered "10" from nothing (12 are
    available; our own conversations). A record the customer holds is read from their orders (``unread_named``)."""
    done, held = {s.operation for s in lookups}, ctx.profile_text().casefold()
    for op in operations:
        if not op.observe or op.writes or op.arg_names() or not op.follows or op.name in done:
            continue
        data = api.call(op.name, ctx.nickname, {}).data
        listed = {str(k): str(v) for m in (data.values() if isinstance(data, dict) else ()) if isinstance(m, dict)
                  for k, v in m.items()}  # each id's name ({"products": {id: name}})
        if any(not any(listed.get(str(v), str(v)).casefold() in held for v in args.values())
               for _, args in follow_ups(op, data, ctx.text)):
            return [(op.name, {})]
    return []


class Reader:
    """Look-ups a repair makes for itself (a record whose lines it needs), run as the sender: each joins the turn's
    ``lookups`` and ``sources`` (the data the repairs read), and ``note`` adds them to the executor step's trace."""

    def __init__(self, api: SystemApi, operations: Mapping[str, Operation], nickname: str, lookups: list[Step],
                 sources: list[Any]):
        self.api, self.operations, self.nickname = api, operations, nickname
        self.lookups, self.sources, self.fresh = lookups, sources, []

    def __call__(self, name: str, args: dict[str, Any]) -> Step:
        read = Step(operation=name, proposed_args=args, args=args, description=self.operations[name].description,
                    result=self.api.call(name, self.nickname, args))
        self.lookups.append(read)
        self.fresh.append(read)
        if read.result.outcome.succeeded:
            self.sources.append(read.result.data)
        return read

    def record(self, op: Operation, arg: str, value: str) -> None:
        """Read the record ``value`` of ``op``'s argument ``arg`` with the look-up ``op`` needs that takes it."""
        for need in (n for n in op.needs if n in self.operations and arg in self.operations[n].arg_names()):
            self(need, {arg: value})

    def unheld(self, op: Operation, args: dict[str, Any]) -> OperationResult | None:
        """The refusal of a look-up ``op`` needs whose every argument ``args`` gives, where it refuses them (the record
        is not the customer's: "There is no order #W… on your account"), as ``op``'s result; else None. Read once a
        turn: a look-up made already is not made again."""
        for need in (self.operations[n] for n in op.needs if n in self.operations):
            names = need.arg_names()
            if not names or any(args.get(n) is None for n in names):
                continue
            given = {n: args[n] for n in names}
            read = next((s for s in self.lookups if s.operation == need.name and s.args == given), None) \
                or self(need.name, given)
            if read.result is not None and not read.result.outcome.succeeded:
                return read.result.model_copy(update={"operation": op.name})
        return None

    def note(self, step: dict[str, Any]) -> None:
        """Add the look-ups made to the executor step's trace record (``step``)."""
        if self.fresh:
            step["lookups"] = [*step.get("lookups", []), *(lookup_record(s) for s in self.fresh)]
            self.fresh = []
