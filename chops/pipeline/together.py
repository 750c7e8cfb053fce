"""The other lines of the same record, asked for later in the message, join the swap being planned.

A message with several requests is split and handled one request at a time (``chops.pipeline.agenda``). "Exchange
my bicycle for a larger frame. The jigsaw puzzle in the same order also needs exchanging: …" became two requests;
the bicycle's exchange was confirmed and committed, and the order, now in "exchange requested", refused the
jigsaw's (train task 98: an order's items change once). So once a look-up this turn has shown the record the
request is about (an order whose lines it names), each request still on the agenda that asks to change other lines
of that record (``each.asked_to_change``, no other kind of change named, no other id typed) joins this one: its text is added to the
request and it leaves the agenda, and the products it names are read (the look-up's ``follows``). The plan then
swaps every line asked for in one call (``chops.pipeline.each``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chops.domain.operations import Operation, named
from chops.pipeline.agenda import AGENDA
from chops.pipeline.choices import typed_ids
from chops.pipeline.context import Step, TurnContext
from chops.pipeline.each import asked_to_change
from chops.pipeline.lookups import follow_ups
from chops.pipeline.walk import lines_in, mentions, names_of, record_fields, values_in


def taken_along(ctx: TurnContext, fresh: list[Step], operations: Iterable[Operation],
                every: dict[str, Operation]) -> list[tuple[str, dict[str, Any]]]:
    """Join the agenda's requests about other lines of a record ``fresh`` (this step's look-ups) read to the turn's
    request (``ctx.text``; see the module docstring); returns the look-ups the joined requests call for. ``operations``:
    those the plan may call, ``every``: the pack's operations by name (the look-ups')."""
    todo = list(ctx.trace.info.get(AGENDA) or [])
    swaps = [op for op in operations if op.writes and op.choice_pairs()]
    kinds = [op.kind for op in operations if op.writes and not op.choice_pairs()]
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
                  and not records & set(typed_ids([part]))]  # no other record typed ("the scarf from #W2")
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
