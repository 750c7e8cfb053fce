"""Grounding at decode time: an id argument is picked from the ids the conversation has seen, not written freely.

A 1.5B model that has just read an order writes an item id that looks right and is not there (a digit
changed, a product id where an item id goes). Grounding after the fact (``chops.pipeline.grounding``)
drops such a value and the reply asks the customer for it: honest, but the request fails. So a pack
names, per argument field (``CHOICES_FROM`` in ``chops.domain.operations``), the result keys its values
come from, and once the profile or a look-up has returned such values, the plan's grammar offers only
them (an enum): the model can copy an id, it cannot invent one.

A path is a key looked for at any depth, then optional sub-keys after dots: ``item_id`` (every value
stored under that key), ``variants`` (a mapping's keys: the variants are keyed by item id),
``payment_methods.id`` (each listed method's ``id``). A field with no value seen yet stays free text,
grounded after the fact as ever.

An id the customer typed is always offered too (``typed_ids``): "cancel order #W123" names an order the
look-ups may not hold (someone else's); the operation then refuses it. Without it, the grammar would make
the model pick one of the customer's own orders instead: a change nobody asked for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from chops.domain.operations import Operation

# (operation, argument, the values it may take), in a hashable form: the plan schema is cached on it.
Options = tuple[tuple[str, str, tuple[str, ...]], ...]


def _under(data: Any, key: str) -> Iterator[Any]:
    """Every value stored under ``key`` in ``data``, at any depth."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if key in node:
                yield node[key]
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)


def _descend(node: Any, keys: list[str]) -> Iterator[Any]:
    """``node[keys[0]][keys[1]]...``, mapped over lists on the way."""
    if not keys:
        yield node
    elif isinstance(node, (list, tuple)):
        for item in node:
            yield from _descend(item, keys)
    elif isinstance(node, dict) and keys[0] in node:
        yield from _descend(node[keys[0]], keys[1:])


def _ids(leaf: Any) -> Iterator[str]:
    """A mapping's keys, a list's scalars, or the scalar itself, as text."""
    if isinstance(leaf, dict):
        yield from (str(k) for k in leaf)
    elif isinstance(leaf, (list, tuple)):
        yield from (str(x) for x in leaf if _scalar(x))
    elif _scalar(leaf):
        yield str(leaf)


def _scalar(value: Any) -> bool:
    return value is not None and not isinstance(value, (bool, dict, list, tuple))


def values_at(data: Any, path: str) -> list[str]:
    """The values ``path`` (see the module docstring) finds in ``data``, first seen first, each once."""
    first, *rest = path.split(".")
    found = (v for node in _under(data, first) for leaf in _descend(node, rest) for v in _ids(leaf))
    return list(dict.fromkeys(found))


# An id as people type one: a run of letters, digits, '#', '_' or '-' holding a digit ("#W0001", "gift_card_7").
_TYPED_ID = re.compile(r"#?[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*")


def typed_ids(texts: Iterable[str]) -> list[str]:
    """The id-like tokens (a digit in them, 3 characters or more) the customer typed, first seen first."""
    return list(dict.fromkeys(m.group() for text in texts for m in _TYPED_ID.finditer(text) if len(m.group()) >= 3))


def arg_options(operations: Iterable[Operation], sources: Iterable[Any], typed: Iterable[str] = ()) -> Options:
    """For each argument that declares where its values come from, the values ``sources`` (the profile's
    data and the conversation's look-up results) hold, then the ids the customer ``typed``; an argument with no
    value found in ``sources`` is left out (free text)."""
    sources, typed = list(sources), list(typed)
    out = []
    for op in operations:
        for arg, paths in sorted(op.choice_keys().items()):
            values = dict.fromkeys(v for data in sources for path in paths for v in values_at(data, path))
            if values:
                out.append((op.name, arg, tuple(dict.fromkeys([*values, *typed]))))
    return tuple(out)
