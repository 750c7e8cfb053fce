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

A pack may also name the states a value must be in (``CHOICES_WHERE``: only a pending order is cancelled,
only a delivered one returned). The profile and the look-ups say each order's state, so the grammar offers
"cancel" only the pending orders, and an operation with nothing to act on is not offered at all
(``usable``); an order of no known state (someone else's, typed) is still offered, and refused.
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


def record_states(sources: Iterable[Any], keys: Iterable[str]) -> dict[str, dict[str, str]]:
    """``{state key: {value: state}}``: each record (a mapping at any depth) holding a state key gives that
    state to each of its scalar values (an order's id gets the order's status); a later source's record wins,
    so an order looked up this turn counts over the profile's overview."""
    states: dict[str, dict[str, str]] = {key: {} for key in keys}
    for data in sources:
        stack = [data]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for key, found in states.items():
                    if isinstance(node.get(key), str):
                        found.update((str(v), node[key]) for v in node.values() if _scalar(v))
                stack.extend(node.values())
            elif isinstance(node, (list, tuple)):
                stack.extend(node)
    return states


def _in_state(values: list[str], where: dict[str, tuple[str, ...]], states: dict[str, dict[str, str]],
              named: list[str]) -> list[str]:
    """``values`` whose known state is allowed by ``where`` (a value of no known state stays). When the message
    ``named`` ids of a known state, only those: "exchange the lamp from #W2" must not become an exchange in
    another order because #W2 is pending (the operation is then not offered at all)."""
    def fits(v: str) -> bool:
        return all(states[key].get(v) in (None, *allowed) for key, allowed in where.items())  # None: not known
    known = [v for v in named if any(v in states[key] for key in where)]
    return [v for v in (known or values) if fits(v)]


def arg_options(operations: Iterable[Operation], sources: Iterable[Any], typed: Iterable[str] = (),
                named: Iterable[str] = ()) -> Options:
    """For each argument that declares where its values come from, the values ``sources`` (the profile's
    data and the conversation's look-up results) hold, then the ids the customer ``typed``; an argument with no
    value found in ``sources`` is left out (free text). An argument that also declares the states its values
    must be in (``CHOICES_WHERE``) keeps the values in those states, only those ``named`` in the current
    message when it names some (``_in_state``): possibly none (see ``usable``)."""
    operations, sources, typed, named = list(operations), list(sources), list(typed), list(named)
    states = record_states(sources, {key for op in operations for where in op.choice_states().values()
                                     for key in where})
    out = []
    for op in operations:
        wheres = op.choice_states()
        for arg, paths in sorted(op.choice_keys().items()):
            values = dict.fromkeys(v for data in sources for path in paths for v in values_at(data, path))
            if values:
                offered = list(dict.fromkeys([*values, *typed]))
                if arg in wheres:
                    offered = _in_state(offered, wheres[arg], states, named)
                out.append((op.name, arg, tuple(offered)))
    return tuple(out)


def usable(operations: tuple[Operation, ...], options: Options) -> tuple[tuple[Operation, ...], Options]:
    """The operations with a value to offer for every closed argument, and their options: "cancel" is not
    offered to a customer whose orders were all delivered (a 1.5B model otherwise proposed it, was refused,
    and proposed the next pending-only operation). When no operation is left, all of them, the empty
    choices left as free text (the operation's refusal then says why)."""
    empty = {name for name, _, values in options if not values}
    kept = tuple(op for op in operations if op.name not in empty)
    if not kept:
        return operations, tuple(o for o in options if o[2])
    return kept, tuple(o for o in options if o[0] not in empty)
