"""The same change for every record a request covers: "cancel all my pending orders", "change both t-shirts I have on
order to purple", "ship each of my open orders to the new address".

Asked to change "all my pending t-shirts" (two pending orders hold one), the 1.5B changed the first order's and
stopped; told it was done, the customer asked again and the model proposed the same order, now refused (train
task 4; 11 and 22 alike). So where the request quantifies over the records a write's record argument takes (the
argument whose record must be in some state, ``CHOICES_WHERE``: an order) and the plan changes only some of them,
the same write is added for each other record in a state the operation takes that the request is about (the
records holding what it names, else all of them), up to the plan's bound (``MAX_PLAN_STEPS``). A write of no record
(the customer's default address) gains the same change, by the operation that takes its arguments and a record,
for each record the request quantifies over ("… all my pending orders, and my default address too": ``siblings``).

"Quantifies over the records" is a word of "all", "every", "each", "both", "two" or "three" (所有, 全部, 每, 两)
followed within a few words by the record's noun in the plural ("all my orders": the record argument's name without
its "_id") or by a name two or more of those records hold ("both t-shirts", "it's two laptops": train task 95).
"Return all the items from my last order" quantifies items: nothing is added; nor where the customer typed a
record's id.

Without a quantifier, a write of lines gains the same write for each other record (in a state it takes) that alone
holds a product the request asks this change of and the write's own record lacks (``elsewhere``): "return the
skateboard, the garden hose and the pet bed", each in another delivered order.

A record's arguments are the write's own, with its lines taken anew from that record (each list argument whose
values the first record holds): a swap's old lines from the new items' products (``pairing.paired``), another
list the lines the request names, or, where the first call took every line of its record, every line of this one;
and a value that was the first record's own (``CHOICES_ORIGINAL``: its original payment method) this record's own
("return everything from both my orders": each refunded to its own method, train task 11).
Where a record's lines are not known yet it is looked up first (the operation's ``needs`` that take the record
argument). An added write whose own dry run is refused or changes nothing is left out: the plan, which the verifier
checks and the customer confirms as one, only gains changes that can be made.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from chops.domain.operations import MAX_PLAN_STEPS, Operation
from chops.domain.system import SystemApi
from chops.pipeline.choices import in_state, lines_of, record_arg
from chops.pipeline.pairing import paired
from chops.pipeline.completion import own_value
from chops.pipeline.context import Step, TurnContext, asked_for_value
from chops.pipeline.each import asked_to_change
from chops.pipeline.lookups import Reader
from chops.pipeline.several import COUNTS, EVERY_ZH, QUANTIFIERS, pattern
from chops.pipeline.states import in_named_states
from chops.pipeline.walk import SENTENCE, mentioned, mentions, names_of, record_fields, stems, typed_ids, values_in

_QUANTIFIER = pattern((*QUANTIFIERS, *COUNTS), (*EVERY_ZH, "每", "两"))
_NOT_QUANTIFYING = re.compile(r"\b(?:all right|that'?s all|that is all|at all|all set|after all|all good)\b",
                              re.IGNORECASE)
_SPAN = 6  # the words after a quantifier that it quantifies
_NEAR = 3  # of those, the ones where the record's noun counts in the singular too ("every order", "each order's")
_WORDS = re.compile(r"\w[\w'-]*")

def quantified(text: str, noun: str, names: list[str]) -> bool:
    """Whether a quantifier of ``text`` quantifies ``noun`` (in the plural within ``_SPAN`` words, in any form within
    ``_NEAR``) or one of ``names`` (in the plural): "all my orders", "every order", "both t-shirts"; not "all the
    items from my last order"."""
    spared = [m.span() for m in _NOT_QUANTIFYING.finditer(text)]
    for m in _QUANTIFIER.finditer(text):
        if any(a <= m.start() < b for a, b in spared):
            continue
        if not m.group().isascii():  # Chinese: no plural to tell by
            return True
        words = [w.lower() for w in _WORDS.findall(text[m.end():])[:_SPAN]]
        plural = [w for w in words if w.endswith("s")]
        if any(noun in stems(w) for w in plural + words[:_NEAR]) or any(mentions(" ".join(plural), n) for n in names):
            return True
    return False


def others(op: Operation, args: dict[str, Any], sources: list[Any], text: str, typed: list[str],
           taken: set[str]) -> list[str]:
    """The other records the request ``text`` asks the same write for (module docstring): in a state ``op`` takes,
    about what it names, not ``taken`` already; [] unless it quantifies over them."""
    arg = record_arg(op)
    if arg is None or args.get(arg) is None:
        return []
    return [v for v in quantified_records(op, sources, text, typed) if v not in taken and v != args[arg]]


def quantified_records(op: Operation, sources: list[Any], text: str, typed: list[str]) -> list[str]:
    """The records of ``op``'s record argument in a state it takes that the request ``text`` quantifies over ("all my
    pending orders"; those holding what it names, where it names some); [] where it does not, or a record's id is
    typed."""
    arg = record_arg(op)
    found = _takeable(op, sources, typed)
    if found is None:
        return []
    ok, held = found
    # The names two or more of them hold that the request names: "both t-shirts" quantifies the orders holding one.
    counts = Counter(str(n) for v in ok for n in set(names_of(held.get(v))))
    names = [n for n, c in counts.items() if c >= 2 and mentions(text, n)]
    if not quantified(text, arg.removesuffix("_id").lower(), names):
        return []
    return mentioned(ok, held, text) or ok


# What the customer says to leave as it is: "my pending order can stay where it is", "keep my pending order".
_LEFT = re.compile(r"\b(?:not|never|keep|stay|stays|leave|as it is)\b|n't", re.IGNORECASE)


def by_state(op: Operation, sources: list[Any], text: str, typed: list[str]) -> list[str]:
    """The records of ``op``'s record argument that ``text`` names by a state ``op`` takes and the record's noun, in a
    clause asking for ``op`` (``Operation.asked_in``) and saying nothing is to stay: "my pending order", where exactly
    one is in that state; "my pending orders", every one. [] otherwise, or where a record's id is typed. Told "send my
    pending order there, and make it my default address as well", the 1.5B changed the default address alone (our own
    conversations)."""
    arg = record_arg(op)
    found = _takeable(op, sources, typed)
    if found is None:
        return []
    noun = arg.removesuffix("_id").replace("_", " ")
    for clause in re.split(r"[,;]|\band\b|" + SENTENCE.pattern, text):
        for state in {s.split(" (")[0] for states in op.choice_states()[arg].values() for s in states}:
            said = re.search(rf"\b{re.escape(state)}\s+{re.escape(noun)}(?P<many>s)?\b", clause, re.IGNORECASE)
            if said is None or not op.asked_in([clause]) or _LEFT.search(clause):
                continue
            held = in_named_states(op, arg, found[0], sources, clause)
            if said["many"] or len(held) == 1:
                return held
    return []


def _takeable(op: Operation, sources: list[Any], typed: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """(the records of ``op``'s record argument in a state it takes, each record's names as the data lists them), or
    None where the customer typed one of the records' ids (the records are then theirs to say)."""
    arg = record_arg(op)
    if any(v in typed for v in values_in(sources, op.choice_keys().get(arg, ()))):
        return None
    names = op.choice_names().get(arg, "")
    return in_state(op, sources), record_fields(sources, {names})[names]


def elsewhere(op: Operation, args: dict[str, Any], sources: list[Any], text: str, typed: list[str], taken: set[str],
              kinds: list[str]) -> list[str]:
    """The other records (in a state ``op`` takes, not ``taken``) each of which alone holds a product the request
    ``text`` asks this change of (``each.asked_to_change``; ``kinds``: the other kinds of change) that the write's own
    record does not hold: "return the skateboard, the garden hose and the pet bed", three delivered orders, and the
    1.5B returned the one order's hose (train task 28). [] where the customer typed a record's id."""
    arg = record_arg(op)
    found = _takeable(op, sources, typed) if arg is not None and args.get(arg) is not None else None
    if found is None:
        return []
    ok, listed = found
    held = {v: {str(n) for n in names_of(listed.get(v))} for v in ok}
    own = {str(n) for n in names_of(listed.get(str(args[arg])))}
    out: list[str] = []
    for name in sorted({n for names in held.values() for n in names} - own):
        holders = [v for v in ok if name in held[v] and v != args[arg]]
        if len(holders) == 1 and holders[0] not in taken and asked_to_change(text, name, kinds):
            out.append(holders[0])
    return list(dict.fromkeys(out))


def siblings(operations: Mapping[str, Operation], s: Step, sources: list[Any], text: str, typed: list[str],
             planned: list[Step], room: int, dry_run: Callable[[str, dict[str, Any]], Any]) -> list[Step]:
    """For a write of no record (the customer's default address), the same change of each record the request quantifies
    over, by the operation that takes the same arguments and that record (an order's address) and is not ``planned``
    for it yet, at most ``room``; each with its own dry run succeeded and changing something. Asked for "the address of
    all my pending orders … and my default address too", the 1.5B changed the default address alone (train tasks 22,
    87)."""
    op = operations[s.operation]
    if record_arg(op) is not None:
        return []
    out: list[Step] = []
    for other in operations.values():
        arg = record_arg(other)
        if not other.writes or arg is None or set(other.arg_names()) != {*op.arg_names(), arg}:
            continue
        taken = {str(t.args.get(arg)) for t in planned if t.operation == other.name}
        records = quantified_records(other, sources, text, typed) or by_state(other, sources, text, typed)
        for record in [v for v in records if v not in taken]:
            if len(out) >= room:
                break
            args = {**s.args, arg: record}
            result = dry_run(other.name, args)
            if result.outcome.succeeded and result.diff:
                out.append(Step(operation=other.name, proposed_args=args, args=args, writes=True,
                                description=other.description))
    return out


def fanned(operations: Mapping[str, Operation], s: Step, sources: list[Any], text: str, typed: list[str],
           taken: set[str], room: int, read: Reader, dry_run: Callable[[str, dict[str, Any]], Any],
           quantified: list[str]) -> list[Step]:
    """The same write as ``s`` for the other records the request covers (``quantified``: those it quantifies over,
    ``others``; none: those holding what else it names, ``elsewhere``), at most ``room``; each with its own dry run
    (``dry_run(name, args)``) succeeded and changing something. ``read`` reads a record whose lines are not in
    ``sources`` (its data is added to them)."""
    op = operations[s.operation]
    arg = record_arg(op)
    first = lines_of(op, s.args[arg], sources) if arg is not None and s.args.get(arg) is not None else {}
    needed = [k for k, v in s.args.items() if isinstance(v, list) and k in first]
    out: list[Step] = []
    kinds = [w for o in operations.values() if o.writes and o.kind != op.kind for w in o.kind_words]
    records = quantified or (elsewhere(op, s.args, sources, text, typed, taken, kinds) if needed else [])
    for record in records[:max(room, 0)]:
        if any(k not in lines_of(op, record, sources) for k in needed):  # its lines are not known yet
            read.record(op, arg, record)
        args = _for_record(op, s.args, record, sources, text, first)
        if args is None:
            continue
        result = dry_run(s.operation, args)
        if result.outcome.succeeded and result.diff:
            out.append(Step(operation=s.operation, proposed_args=args, args=args, writes=True,
                            description=op.description))
    return out


def _for_record(op: Operation, args: dict[str, Any], record: str, sources: list[Any], text: str,
                first: dict[str, list[str]]) -> dict[str, Any] | None:
    """``args`` for ``record`` instead of the record they name, its lines taken anew (``first``: the lines of the
    record they name); None when they cannot be."""
    arg = record_arg(op)
    out = {**args, arg: record}
    # A value that was the first record's own (the refund to its original payment method) is this one's own.
    for key in op.choice_original():
        first_own, own = own_value(op, key, args[arg], sources), own_value(op, key, record, sources)
        if own is not None and first_own is not None and str(args.get(key)) == str(first_own):
            out[key] = own
    mine = lines_of(op, record, sources)
    held = record_fields(sources, set(op.choice_names().values()))
    for key, value in args.items():
        if not isinstance(value, list) or key not in first:
            continue
        if key in op.choice_pairs():  # a swap's old lines: those of its new items' products in this record
            out = paired(op, out, sources) or out
        else:
            said = mentioned(mine.get(key, []), held.get(op.choice_names().get(key, ""), {}), text)
            every = sorted(map(str, value)) == sorted(first[key])
            out[key] = said or (list(mine.get(key, [])) if every else [])
        if not out[key] or not set(map(str, out[key])) <= set(mine.get(key, [])):
            return None
    return out


def covered(ctx: TurnContext) -> str:
    """The request whose records the plan may cover: this message, after the request it completes where the last
    turn asked for a value. "Cancel all my pending orders" asked the reason for each; "I ordered them by mistake"
    then cancelled only the first (train task 113)."""
    last = ctx.history[-1] if ctx.history else None
    if last is None or not asked_for_value(last):
        return ctx.text
    return f"{(last.trace or {}).get('request') or last.user_text}\n{ctx.text}"


def fan_out(api: SystemApi, operations: Mapping[str, Operation], ctx: TurnContext, steps: list[Step],
            read: Reader, record: dict[str, Any]) -> list[Step]:
    """``steps`` (a plan, repaired) with the same writes added for the other records the request covers (``fanned``,
    and a write of no record's for its records: ``siblings``), the plan staying within ``MAX_PLAN_STEPS``; ``read``
    looks up a record whose lines are not known (into the turn's look-ups and the data read, ``read.sources``);
    ``record``: the executor step's trace record."""

    def dry_run(name: str, args: dict[str, Any]) -> Any:
        return api.call_plan(ctx.nickname, [(name, args)], dry_run=True)

    text = covered(ctx)
    typed, added, superseded = typed_ids([text]), [], []
    for s in [s for s in steps if s.writes]:
        op = operations[s.operation]
        arg = record_arg(op)
        taken = {str(t.args.get(arg)) for t in steps + added if t.operation == s.operation}
        room = MAX_PLAN_STEPS - sum(1 for t in steps + added if t.writes)
        quantified = others(op, s.args, read.sources, text, typed, taken)
        more = fanned(operations, s, read.sources, text, typed, taken, room, read, dry_run, quantified)
        if not quantified and any(_covers(op, t, s, read.sources) for t in more):
            superseded.append(s)
        added += more
        room = MAX_PLAN_STEPS - sum(1 for t in steps + added if t.writes)
        added += siblings(operations, s, read.sources, text, typed, [*steps, *added], room, dry_run)
    read.note(record)
    if added:
        record["fanned"] = [{"operation": s.operation, "args": s.args} for s in added]
    if superseded:
        record["superseded"] = [{"operation": s.operation, "args": s.args} for s in superseded]
    return [s for s in steps if s not in superseded] + added


def _covers(op: Operation, added: Step, s: Step, sources: list[Any]) -> bool:
    """Whether the write ``added`` (for another record) takes a line of every product the write ``s`` takes: "the
    bookshelf and the jigsaw I received, they're from the same order", and the 1.5B returned another order's bookshelf;
    the order holding both was added for the jigsaw, and ``s`` asked for nothing more (train task 103)."""
    names = record_fields(sources, set(op.choice_names().values()))
    keys = op.choice_names()

    def products(step: Step) -> set[str]:
        return {str(n) for k, vs in step.args.items() if k in keys and isinstance(vs, list)
                and k not in {p["partner"] for p in op.choice_pairs().values()} for v in vs
                if (n := names[keys[k]].get(str(v))) is not None}
    mine = products(s)
    return bool(mine) and mine <= products(added)
