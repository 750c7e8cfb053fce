"""One new item of each product a swap is asked for, and of every one of them when the record is known.

A swap's new items (``CHOICES_ONE_EACH``) are grouped by product: where the message names two to ``MAX_ONE_EACH``
products whose variants were read, the list takes one variant of each group it uses. Which groups it uses was the
model's choice: asked to exchange "the mechanical keyboard … and the smart thermostat" of one order (both read, both
narrowed to the variants described), the 1.5B chose the thermostat alone; the customer said yes, the order was then
in "exchange requested", and the keyboard could no longer be exchanged (train tasks 0 and 58; an order's items
change once). So where one record the swap may change (an order offered whose lines were read) holds two or more
products the message asks to change (``asked_to_change``), the list must take one variant of every one of those
(``EachOf.every``); otherwise any non-empty selection, as before: names may belong to other records, or not be asked
for at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from chops.domain.operations import Operation, named
from chops.pipeline.described import by_name
from chops.pipeline.walk import lines_in, mentions, record_fields

MAX_ONE_EACH = 3  # names a one-each list may combine: 7 selections of them in the grammar; more stay a plain list


class EachOf(NamedTuple):
    """The groups of a one-each list (the variants of each product named, in order), and whether the list takes one
    value of every group (``every``) or of any non-empty selection of them."""

    groups: tuple[tuple[str, ...], ...]
    every: bool = False


def one_each(values: Iterable[str], names: dict[str, Any]) -> EachOf | tuple[()]:
    """``values`` grouped by their name, first seen first, when they have two to ``MAX_ONE_EACH`` names; else ()
    (one name, or none: the list stays free in length, as two lines of the same item may both change)."""
    groups = by_name(values, names)
    return EachOf(tuple(tuple(g) for g in groups.values())) if 2 <= len(groups) <= MAX_ONE_EACH else ()


# A clause: what a sentence says between punctuation, "and", "but" or "or" ("exchange the lamp, but not the kettle").
_CLAUSE = re.compile(r"[,;.!?:，。；！？\n]|\b(?:and|but|or|then|while)\b", re.IGNORECASE)
# Words that take a product out of a change when its clause holds them before it ("not the kettle", "don't swap the
# kettle", "except the kettle") or just before it ("keep the kettle", "leave my kettle").
_NOT = re.compile(r"\b(?:not|no|never|except|without|besides|other than)\b|n't\b", re.IGNORECASE)
_KEEP = re.compile(r"\b(?:keep|leave|keeping|leaving)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)


def asked_to_change(message: str, name: str, other_kinds: Iterable[str]) -> bool:
    """Whether ``message`` asks for a change of the product ``name``: a clause mentions it without a negation before
    it ("not the kettle", "don't exchange the kettle"), a "keep"/"leave" just before it, or another kind of change
    (``other_kinds``: "return", "cancel") in it."""
    kinds = list(other_kinds)
    for clause in _CLAUSE.split(message):
        words = clause.split()
        at = next((i for i in range(len(words)) if mentions(" ".join(words[i:i + 1]), name)), None)
        if at is None:
            continue
        before = " ".join(words[:at]) + " "
        if not _NOT.search(before) and not _KEEP.search(before) and not any(named(k, clause) for k in kinds):
            return True
    return False


def each_asked(op: Operation, arg: str, groups: EachOf, names: dict[str, Any], held: dict[str, list[str]],
               sources: list[Any], message: str, other_kinds: Iterable[str]) -> EachOf:
    """``groups`` of the one-each list ``arg``, to be taken every one where one record of its pair (of the values
    ``held`` for the pair's ``in`` whose lines were read) holds two or more products ``message`` asks to change (only
    those groups, then); else as they are. ``names``: each value's name (its product's)."""
    pair = next(((old, p) for old, p in op.choice_pairs().items() if p["partner"] == arg), None)
    if pair is None:
        return groups
    by = record_fields(sources, {pair[1]["by"]})[pair[1]["by"]]
    kinds = list(other_kinds)
    found = []
    for record in held.get(pair[1]["in"], []):  # those whose lines were read: the others cannot be changed yet
        products = {by.get(line) for line in lines_in(sources, record, op.choice_keys()[pair[0]])}
        asked = tuple(g for g in groups.groups
                      if by.get(g[0]) in products and asked_to_change(message, str(names.get(g[0])), kinds))
        if len(asked) >= 2:
            found.append(asked)
    return EachOf(found[0], every=True) if len(found) == 1 else groups
