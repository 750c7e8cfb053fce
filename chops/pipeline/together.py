"""The other lines of the same record, asked for later in the message, join the swap being planned.

A message with several requests is split and handled one request at a time (``chops.pipeline.agenda``). "Exchange
my bicycle for a larger frame. The jigsaw puzzle in the same order also needs exchanging: …" became two requests;
the bicycle's exchange was confirmed and committed, and the order, now in "exchange requested", refused the
jigsaw's (train task 98: an order's items change once). So once a look-up this turn has shown the record the
request is about (an order whose lines it names), each request still on the agenda that asks to change other lines
of that record (``each.asked_to_change``, no other kind of change named, no other id typed, not to be made like
another line: ``relative.LIKE_ANOTHER``) joins this one: its text is added to the request and it leaves the agenda,
and the products it names are read (the look-up's ``follows``). The plan then swaps every line asked for in one call
(``chops.pipeline.each``).

So too a change described and waiting for the customer's yes, when their answer adds to it instead ("Hold on, not
yet. I also want to return the smart watch from that order"): the waiting change is dropped, and the new request's
call of the same operation on the same record takes its lines as well (``with_dropped``). The return of the watch
alone was proposed, and committed on the next yes; the two skateboards were never returned (train task 91). And a
list of lines takes every line of a product the request asks for all of ("both skateboards": ``all_of_them``), or
every line of its record but those named after "except" ("everything I bought except the coffee maker": ``all_but``),
and a line the model wrote twice is one the request names that it left out (``in_place_of_repeats``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from chops.domain.operations import Operation, named, plain_kind_words
from chops.pipeline.agenda import AGENDA
from chops.pipeline.choices import lines_of, record_arg
from chops.pipeline.context import Step, TurnContext
from chops.pipeline.each import asked_to_change
from chops.pipeline.lookups import follow_ups
from chops.pipeline.relative import LIKE_ANOTHER
from chops.pipeline.walk import SENTENCE, lines_in, mentions, names_of, record_fields, typed_ids, values_in


def taken_along(ctx: TurnContext, fresh: list[Step], operations: Iterable[Operation],
                every: dict[str, Operation]) -> list[tuple[str, dict[str, Any]]]:
    """Join the agenda's requests about other lines of a record ``fresh`` (this step's look-ups) read to the turn's
    request (``ctx.text``; see the module docstring); returns the look-ups the joined requests call for. ``operations``:
    those the plan may call, ``every``: the pack's operations by name (the look-ups')."""
    todo = list(ctx.trace.info.get(AGENDA) or [])
    swaps = [op for op in operations if op.writes and op.choice_pairs()]
    kinds = plain_kind_words(operations)
    if not todo or not swaps or any(named(k, ctx.text) for k in kinds):
        return []
    calls: list[tuple[str, dict[str, Any]]] = []
    listed = _records(swaps, ctx)
    for read in fresh:
        data = read.result.data if read.result is not None and read.result.outcome.succeeded else None
        names = _line_names(swaps, read, data)
        if not any(mentions(ctx.text, n) for n in names):
            continue  # not the record this request is about
        others = [n for n in names if not mentions(ctx.text, n)]
        records = listed - set(map(str, read.args.values()))
        joined = [part for part in todo if any(asked_to_change(part, n, kinds) for n in others)
                  and not records & set(typed_ids([part]))  # no other record typed ("the scarf from #W2")
                  and not LIKE_ANOTHER.search(part)]  # the record read may hold the line to copy (task 23)
        for part in joined:
            todo.remove(part)
            ctx.text = f"{ctx.text.rstrip()} {part}"
            calls += [c for c in follow_ups(every[read.operation], data, part) if c not in calls]
        if joined:
            ctx.trace.info.update({AGENDA: todo, "request": ctx.text})
            ctx.trace.step("joined", record=read.args, requests=joined)
    return calls


def _records(swaps: list[Operation], ctx: TurnContext) -> set[str]:
    """The ids of the records a swap may change that the profile lists (the customer's orders)."""
    paths = [p for op in swaps for pair in op.choice_pairs().values() for p in op.choice_keys().get(pair["in"], ())]
    return set(values_in([ctx.profile.lookup_data()], paths))


def _line_names(swaps: list[Operation], read: Step, data: Any) -> list[str]:
    """The names of the lines a swap could change in the record ``read`` looked up (its argument is the swap's
    record argument: an order's item names), or [] when it read no such record."""
    out: list[str] = []
    for op in swaps:
        for old, pair in op.choice_pairs().items():
            record = read.args.get(pair["in"])
            if record is None or data is None or old not in op.choice_names():
                continue
            field = record_fields([data], {op.choice_names()[old]})[op.choice_names()[old]]
            for line in lines_in([data], record, op.choice_keys()[old]):
                out += [str(n) for n in names_of(field.get(line)) if str(n) not in out]
    return out


# Words that add to what was asked before ("I also want …", "… too", 还要): the new request does not replace it.
_ADDING = re.compile(r"\b(?:also|too|as well|in addition|additionally|besides|plus)\b|也|还|另外", re.IGNORECASE)


def with_dropped(op: Operation, args: dict[str, Any], dropped: Sequence[tuple[str, dict[str, Any]]],
                 request: str) -> dict[str, Any] | None:
    """``args`` with the lines of the ``dropped`` change's call of ``op`` on the same record added, where the
    ``request`` adds to it (``_ADDING``); None when nothing changes. A swap's pairs stay pairs (an old line the new
    call also changes takes the new call's new item); other list arguments (a return's lines) are joined, each value
    once more than the new call has it only as often as the old had it."""
    record = record_arg(op)
    old = next((a for name, a in dropped if name == op.name and record is not None
                and a.get(record) == args.get(record)), None)
    if old is None or not _ADDING.search(request):
        return None
    out = dict(args)
    pairs = op.choice_pairs()
    partners = {pair["partner"] for pair in pairs.values()}
    for arg, value in args.items():
        before = old.get(arg)
        if not isinstance(value, list) or not isinstance(before, list):
            continue
        if arg in pairs:  # the old lines and their new items, then the new call's, the new call's winning
            partner = pairs[arg]["partner"]
            joined = dict(zip(before, old.get(partner) or []))
            joined.update(zip(value, args.get(partner) or []))
            out[arg], out[partner] = list(joined), list(joined.values())
        elif arg not in partners:
            out[arg] = [*before, *(v for v in value if v not in before)]
    return out if out != args else None


def all_of_them(op: Operation, args: dict[str, Any], sources: Iterable[Any], request: str) -> dict[str, Any] | None:
    """``args`` with each list of its record's lines (a return's item ids) holding every line of a product it lists
    where the ``request`` asks for all of them ("both skateboards", "all the kettles"), or None when nothing changes;
    a swap's lines are ``paired``. Asked to "return both skateboards and the smart watch", the 1.5B listed one
    skateboard and the watch (train task 91)."""
    out = dict(args)
    for key, value, lines, named_as in _line_lists(op, args, sources):
        listed = {str(n) for v in value for n in names_of(named_as.get(str(v)))}
        wanted = [line for line in lines if any(str(n) in listed and _all_of(request, str(n))
                                                for n in names_of(named_as.get(line)))]
        room, more = Counter(map(str, value)), []
        for line in wanted:
            if room[line]:
                room[line] -= 1  # listed already
            else:
                more.append(line)
        out[key] = [*value, *more]
    return out if out != args else None


# A word for every one of a product, right before its name: "both skateboards", "all of the kettles". Not a number:
# "I got two lamps; return the broken one".
_ALL = re.compile(r"\b(?:both|all|every|each)\b((?:\s+[\w-]+){1,3})", re.IGNORECASE)


def _all_of(request: str, name: str) -> bool:
    """Whether ``request`` asks for every one of ``name`` ("both skateboards"), not "both: the scarf and the lamp"."""
    return any(mentions(words, name) for words in (m.group(1) for m in _ALL.finditer(request)))


# "everything (I just bought) except the …", "all the items but the …": the words after the exception name what stays.
# Not "everything is fine but the lamp is broken": no verb of being between "everything" and "but".
_EXCEPTING = r"except(?: for)?|but(?: not)?|other than|apart from|besides|save for"
# What takes in every line: "everything", "all the items", "all the stuff I received", "all I bought" (own7: "send back
# all the stuff I received except the tablet" returned the tablet alone).
_EVERY_LINE = r"everything|all(?: of)?(?: the| my)? (?:items|things|products|stuff|purchases|goods|of it|of them)" \
              r"|all(?= i\b)"
_ALL_BUT = re.compile(rf"\b(?:{_EVERY_LINE})\b"
                      rf"((?:\s+[\w'-]+){{0,6}}?)\s+(?:{_EXCEPTING})\b([^.!?;]*)", re.IGNORECASE)
_BEING = re.compile(r"\b(?:is|was|are|were|seems?|looks?|works?|went)\b", re.IGNORECASE)


# "return everything in that order", "return all the items", "return the whole order": every line, where nothing
# narrows it ("everything I bought that's gaming-related": train task 14).
_EVERY = re.compile(r"\b(?:everything|all(?: of)?(?: the| my)? (?:items|things|products|stuff|purchases)|all of it)"
                    r"(?:\s+(?:in|from|on|of)\s+(?:(?:that|this|the|my)\s+)?(?:\w+\s+)?order\b|\s*(?=$|[,.;!?]"
                    r"|\s+(?:and|please|then)\b))|\bthe (?:whole|entire) order\b", re.IGNORECASE)
# A clause that excepts something in other words ("don't return everything", "… that's not for gaming").
_EXCEPT = re.compile(rf"\b(?:{_EXCEPTING}|not|no|never|without|unless)\b|n't", re.IGNORECASE)


def all_but(op: Operation, args: dict[str, Any], sources: Iterable[Any], request: str) -> dict[str, Any] | None:
    """``args`` with each list of its record's lines holding every line of the record but those of the products named
    after an exception ("return everything I just bought except the coffee machine"), where the request says so
    and names one of them, or every line where a sentence naming the write's kind asks for all of them and excepts
    none ("return everything in that order"); else None. Asked so, the 1.5B returned one item, another machine
    (train task 73), and one tablet of the order (train task 82)."""
    said = [m.group(2) for m in _ALL_BUT.finditer(request) if not _BEING.search(m.group(1))]
    every = not said and any(op.named_in(clause) and _EVERY.search(clause) and not _EXCEPT.search(clause)
                             for clause in SENTENCE.split(request))
    out = dict(args)
    for key, _, lines, named_as in _line_lists(op, args, sources) if said or every else ():
        kept = [line for line in lines if any(mentions(rest, str(n)) for rest in said
                                              for n in names_of(named_as.get(line)))]
        if (kept or every) and len(kept) < len(lines):
            out[key] = [line for line in lines if line not in kept]
    return out if out != args else None


def in_place_of_repeats(op: Operation, proposed: dict[str, Any], args: dict[str, Any], sources: Iterable[Any],
                        request: str) -> dict[str, Any] | None:
    """``args`` with each list of its record's lines that lost repeats of a line (``pairing.capped``) given the lines
    the request names and the list lacks instead, where as many are missing as were dropped; else None. Asked to
    return the vacuum cleaner, the headphones and the smart watch, the 1.5B listed the vacuum cleaner twice and no
    watch (train task 2)."""
    out = dict(args)
    for key, value, lines, named_as in _line_lists(op, args, sources):
        lost = len(proposed.get(key) or ()) - len(value)
        missing = list(dict.fromkeys(line for line in lines if line not in map(str, value)
                                     and any(mentions(request, str(n)) for n in names_of(named_as.get(line)))))
        if lost > 0 and len(missing) == lost:
            out[key] = [*value, *missing]
    return out if out != args else None


def _line_lists(op: Operation, args: dict[str, Any],
                sources: Iterable[Any]) -> Iterator[tuple[str, list[Any], list[str], dict[str, Any]]]:
    """(argument, its value, every line of the record it lists, each line's name) for each list of a record's lines in
    ``args`` (a return's item ids; none for a swap, whose lines are ``paired``)."""
    arg = record_arg(op)
    if op.choice_pairs() or arg is None or args.get(arg) is None:
        return
    sources = list(sources)
    lines = lines_of(op, args[arg], sources)
    names = record_fields(sources, set(op.choice_names().values()))
    for key, value in args.items():
        if isinstance(value, list) and key in lines and key in op.choice_names():
            yield key, value, lines[key], names[op.choice_names()[key]]
