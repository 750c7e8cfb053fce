"""A record the customer named, taken whole: the parts of an address a plan left empty, from the one address of
the customer's data that the parts it gave match.

"Ship that order to my Chicago address" names an address the customer's profile or one of their orders holds, not
six typed values. A 1.5B model copies some parts (the street, the city) and writes null for the rest (the second
line), and the platform refuses the plan as missing a value: the customer is asked for what they already said,
and says it again. A pack declares the parts as one group (``CHOICES_RECORD``); after the model proposes, each
group's empty parts are filled from the record of the seen data (the profile, the look-ups) that holds every part
of the group and agrees with each part given (case and spaces aside). Nothing is filled when no part was given,
when no record agrees, or when the records that agree differ (two Houston addresses and only "Houston" given):
the plan stays as proposed, and grounding and the platform judge it as ever.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.choices import records


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _same(a: Any, b: Any) -> bool:
    return " ".join(str(a).split()).casefold() == " ".join(str(b).split()).casefold()


def completed(op: Operation, args: dict[str, Any], sources: Iterable[Any]) -> dict[str, Any] | None:
    """``args`` with each ``CHOICES_RECORD`` group's empty parts taken from the one record of ``sources`` that
    agrees with the parts given, or None when nothing is filled (see the module docstring)."""
    groups = op.choice_records()
    if not groups:
        return None
    sources = list(sources)
    out = dict(args)
    for fields in groups.values():
        given = {f: args[f] for f in fields if not _blank(args.get(f))}
        if not given or len(given) == len(fields):
            continue
        agreeing = {tuple(str(node[f]) for f in fields) for data in sources for node in records(data)
                    if all(f in node for f in fields) and all(_same(node[f], v) for f, v in given.items())}
        if len(agreeing) == 1:
            (record,) = agreeing
            out.update((f, value) for f, value in zip(fields, record) if f not in given and value.strip())
    return out if out != args else None
