"""What the message names that a plan leaves unchanged: evidence for the verifier.

Asked to exchange "the mechanical keyboard … and the smart thermostat" in one order, the 1.5B model proposed
the thermostat alone, and the verifier's quick score passed it (9 of 10): nothing in its evidence showed that a
second item was asked for. So the executor works out, from the names the pack declares for an argument's values
(``CHOICES_MENTIONED``: an order line's product name), which of the looked-up lines the message names that none
of the plan's steps changes, and the verifier is shown them. It decides; this only points (the customer may have
named a line to keep it: "return the lamp, I keep the desk").

A step whose operation takes whole records (a cancelled order: its names are a list) changes all of their names;
one that takes single lines (an exchange's items) changes only the names of the lines it takes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.choices import mentioned, record_fields, values_at


def left_out(steps: Iterable[tuple[Operation, dict[str, Any]]], sources: list[Any], message: str) -> list[str]:
    """The names ``message`` mentions among the single lines the writes of ``steps`` ((operation, arguments))
    could take from ``sources`` (the profile and the look-ups) that no step changes, sorted."""
    steps = [(op, args) for op, args in steps if op.writes and op.choice_names()]
    fields = record_fields(sources, {key for op, _ in steps for key in op.choice_names().values()})
    named: set[str] = set()
    changed: set[str] = set()
    for op, args in steps:
        lines = False
        for arg, key in op.choice_names().items():
            names = fields[key]
            values = list(dict.fromkeys(v for data in sources for path in op.choice_keys().get(arg, ())
                                        for v in values_at(data, path)))
            chosen = [str(v) for v in (args.get(arg) if isinstance(args.get(arg), list) else [args.get(arg)])]
            single = [v for v in values if isinstance(names.get(v), str)]
            if single:  # an argument of lines, each with its one name
                lines = True
                named |= {names[v] for v in mentioned(single, names, message)}
                changed |= {names[v] for v in chosen if isinstance(names.get(v), str)}
        if not lines:  # whole records: every name they hold changes
            for arg, key in op.choice_names().items():
                chosen = args.get(arg) if isinstance(args.get(arg), list) else [args.get(arg)]
                for v in chosen:
                    held = fields[key].get(str(v))
                    changed |= set(held) if isinstance(held, list) else {held} if held else set()
    return sorted(named - changed)
