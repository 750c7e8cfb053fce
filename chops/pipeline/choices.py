"""Grounding at decode time: an id argument is picked from the ids the conversation has seen, not written freely.

A 1.5B model that has just read an order writes an item id that looks right and is not there (a digit
changed, a product id where an item id goes). Grounding after the fact (``chops.pipeline.grounding``)
drops such a value and the reply asks the customer for it: honest, but the request fails. So a pack
names, per argument field (``CHOICES_FROM`` in ``chops.domain.operations``), the result keys its values
come from, and once the profile or a look-up has returned such values, the plan's grammar offers only
them (an enum): the model can copy an id, it cannot invent one.

A path (``chops.pipeline.walk``) names where in the data. A field with no value seen yet stays free text, grounded
after the fact as ever.

An id the customer typed is always offered too (``walk.typed_ids``): "cancel order #W123" names an order the
look-ups may not hold (someone else's); the operation then refuses it. Without it, the grammar would make
the model pick one of the customer's own orders instead: a change nobody asked for. A bare number is offered only
where the ids are numbers of its length: "1000 more pieces" names no id (``_may_be``).

Where the profile lists what each value holds (``CHOICES_MENTIONED``: an order's item names), "the desk lamp
I got" offers the read only the orders holding one. The states an operation needs (``CHOICES_WHERE``) do not
narrow the grammar: a 1.5B model denied the order it meant picked another, valid but unasked for, and denied
the operation it meant (say ``modify_pending_order_items``), snapped to the next name with the same start
(``modify_user_address``). Instead an operation with a counterpart for the state found
(``chops.pipeline.states.counterpart``) is switched to it, and any other is refused (``states.out_of_state``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from chops.domain.operations import Operation, plain_kind_words
from chops.pipeline.described import about, by_name, descriptions, features, held_before, not_features
from chops.pipeline.each import EachOf, each_asked, one_each
from chops.pipeline.narrowing import closest, kept_as_said, narrowed, preferred
from chops.pipeline.relative import PRICE, compared, comparisons, labels
from chops.pipeline.states import in_asked_states, in_named_states
from chops.pipeline.walk import (counted, holding, lines_in, mentioned, mentions, placed, record_fields, records,
                                 values_in)

# (operation, argument, the values it may take, and for a ``CHOICES_ONE_EACH`` list the values of each name the
# message mentions, else ()), in a hashable form: the plan schema is cached on it.
Options = tuple[tuple[str, str, tuple[str, ...], EachOf | tuple[()]], ...]


# A token of digits and the marks between numbers: a count, a range, a time, a size ("1000", "30-50", "10:30", "2.5").
_NUMBERS = re.compile(r"\d+(?:[-./:x]\d+)*")


def _may_be(typed: str, values: list[str]) -> bool:
    """Whether the token the customer ``typed`` may be one of the kind of ``values``: a number, or numbers joined by
    a mark, only where some value has its shape (its digits as digits): "1000 more pieces" is no item id of ten
    digits, nor an order id "#W…" (the 1.5B wrote "1000" as both new items of a camera's exchange, train task 98);
    "the same 30-50 lb weight range" is no item id either (it wrote "30-50" as the new item twice, our own
    conversations)."""
    def shape(token: str) -> str:
        return re.sub(r"\d", "0", token)
    return not _NUMBERS.fullmatch(typed) or any(shape(v) == shape(typed) for v in values)


def arg_options(operations: Iterable[Operation], sources: Iterable[Any], typed: Iterable[str] = (),
                message: str = "", asked: Iterable[str] = (), earlier: Iterable[str] = ()) -> Options:
    """For each argument that declares where its values come from, the values ``sources`` (the profile's
    data and the conversation's look-up results) hold, then the ids the customer ``typed``; an argument with no
    value found in ``sources`` is left out (free text). One that also declares where its values' names are
    (``CHOICES_MENTIONED``) keeps, when the current ``message`` mentions some of those names, only the values
    it mentions (``mentioned``), and the typed ones; grouped by name when it declares ``CHOICES_ONE_EACH``
    (``one_each``). A pair's partner leaves out the lines that could only pair with themselves (``own_lines``).
    One that declares ``CHOICES_DESCRIBED`` keeps the values whose features the customer's messages (``asked``)
    describe best (``chops.pipeline.described``). Where the ``message`` names none of an argument's values, the newest
    of the request's ``earlier`` messages that names some does ("refund it to my gift card then", after "return the
    more expensive tablet" was refused for the card asked: the 1.5B returned the whole order, train task 83)."""
    operations, sources, typed, asked = list(operations), list(sources), list(typed), list(asked)
    kinds = plain_kind_words(operations)
    fields = record_fields(sources, {key for op in operations for key in op.choice_names().values()})
    texts = descriptions(node for data in sources for node in records(data)) \
        if any(op.choice_described() for op in operations) else {}
    out = []
    for op in operations:
        names = op.choice_names()
        found: dict[str, list[str]] = {}
        said: dict[str, list[str]] = {}
        for arg, paths in sorted(op.choice_keys().items()):
            values = values_in(sources, paths)
            if values:
                said[arg] = []
                if arg in names:
                    named_in, hits = next(((t, m) for t in (message, *earlier)
                                           if (m := mentioned(values, fields[names[arg]], t))), (message, []))
                    said[arg] = counted(hits, fields[names[arg]], named_in)
                    if said[arg] and arg not in op.choice_pairs():
                        said[arg] = told_apart(said[arg], fields[names[arg]], sources, named_in)
                found[arg] = said[arg] or values
                if op.writes and not said[arg]:  # "my pending order": not a cancelled one
                    found[arg] = in_named_states(op, arg, found[arg], sources, message)
                if not op.writes:
                    found[arg] = in_asked_states(op, arg, found[arg], operations, sources, message)
                    if not said[arg]:  # "the order I placed last" (``walk.placed``; "order_id" is an order's)
                        found[arg] = placed(found[arg], arg.removesuffix("_id").replace("_", " "), message)
        # The record a pair is in: the one offered, or the one typed among those offered ("#W… has a lamp…").
        held = {arg: [v for v in values if v in typed] or values for arg, values in found.items()}
        excluded = own_lines(op, held, sources)
        for arg, values in found.items():
            values = [v for v in values if v not in excluded.get(arg, ())] or values
            extra = [t for t in typed if _may_be(t, values)]
            if arg in op.choice_described():
                extra = not_features(extra, [texts.get(v, "") for v in values])
                values = _described(op, arg, values, found, fields, asked, texts, sources)
            named = [v for v in said[arg] if v in values]
            groups = one_each(named, fields[names[arg]]) if arg in op.choice_one_each() else ()
            if groups:  # every product of its record the message asks to change (chops.pipeline.each)
                groups = each_asked(op, arg, groups, fields[names[arg]], held, sources, message, kinds)
            out.append((op.name, arg, tuple(dict.fromkeys([*values, *extra])), groups))
    return tuple(out)


def _described(op: Operation, arg: str, values: list[str], found: dict[str, list[str]],
               fields: dict[str, dict[str, Any]], asked: list[str], texts: dict[str, str],
               sources: list[Any]) -> list[str]:
    """``values`` narrowed to those the customer described (``_fit``); then, where they named a feature, the ones
    most like the line replaced (``narrowing.closest``); last, where they ranked alternatives, those with the one
    said first (``narrowing.preferred``)."""
    fit = _fit(op, arg, values, found, fields, asked, texts, sources)
    spoken = {name: {list(options).index(option) for option, _ in comparisons(
        " ".join(about(asked, name, fit.known, mentions)), options) if option in options}
        for name, (_, options) in fit.compared_to.items()}
    values = closest(fit.values, asked, names=fit.names, described=texts, old=fit.old, known=fit.known,
                     mentions=mentions, every=values, spoken=spoken, labels=fit.placed)
    return preferred(values, asked, names=fit.names, described=texts, known=fit.known, mentions=mentions,
                     every=fit.every, labels=fit.placed, old=fit.old)


@dataclass(frozen=True)
class _Fitting:
    """The values that fit what the customer said (``values``, of ``every`` offered), and what narrowing them further
    reads: each value's product (``names``), every product name the sources give (``known``), each product's old
    features (``old``), the line replaced with its labelled options (``compared_to``), and its places' names
    (``placed``)."""

    values: list[str]
    every: list[str]
    names: dict[str, Any]
    known: set[str]
    old: dict[str, set[str]]
    compared_to: dict[str, tuple[str, dict[str, str]]]
    placed: dict[str, list[str]]


def _fit(op: Operation, arg: str, values: list[str], found: dict[str, list[str]],
         fields: dict[str, dict[str, Any]], asked: list[str], texts: dict[str, str], sources: list[Any]) -> _Fitting:
    """``values`` narrowed to those the customer described (``narrowing.narrowed``; ``fields``: ``record_fields`` of
    the names, ``texts``: each value's description), per name; a feature the lines they replace already have (the
    pair's lines of the same name, ``found``) does not count. Then, where the customer compares with the line replaced
    ("a bigger one"), those on that side of it (``relative.compared``)."""
    named = {key: fields[key] for key in set(op.choice_names().values())}
    names = named[op.choice_names()[arg]]
    # Every name the sources give (an order's item names too): a sentence about another product is not this one's.
    known = {str(n) for found_names in named.values() for v in found_names.values()
             for n in (v if isinstance(v, list) else [v])}
    old: dict[str, set[str]] = {}
    compared_to: dict[str, tuple[str, dict[str, str]]] = {}  # name -> the line replaced, its labelled options
    for lines_arg, pair in op.choice_pairs().items():
        if pair["partner"] == arg:
            for line in _held(found.get(lines_arg, []), named[op.choice_names()[lines_arg]], texts, asked):
                old.setdefault(str(names.get(line)), set()).update(features(texts.get(line, "")))
                held = labels(t for node in holding(sources, line) for t in node.values() if isinstance(t, str))
                compared_to.setdefault(str(names.get(line)), (line, held))
    # Compared after the named features narrowed: alternatives ranked in one place ("battery first, then USB") are
    # told from the whole list, and the comparison keeps its side of those (none on that side: all of them).
    placed = {name: list(options) for name, (_, options) in compared_to.items()}  # each product's places' names
    kept = narrowed(values, asked, names=names, described=texts, old=old,
                    excluded=op.choice_described()[arg].get("excluded"), known=known, mentions=mentions,
                    labels=placed)
    kept = compared(kept, asked, names=names, described=texts, old=compared_to, known=known, mentions=mentions)
    return _Fitting(kept, values, names, known, old, compared_to, placed)


@dataclass(frozen=True)
class Fitted:
    """The variants of one product that fit what the customer said: their ``values``, each ``described`` as the
    look-ups list it, and the names of the places of the line replaced (``places``: "material", "capacity")."""

    values: list[str]
    described: list[str]
    places: list[str]


def fitting(op: Operation, args: dict[str, Any], sources: Iterable[Any], asked: Iterable[str]) -> dict[str, Fitted]:
    """``{product name: its values that fit what the customer's ``asked`` words describe (``Fitted``)}`` for each
    argument of the write ``op`` whose values are described (``CHOICES_DESCRIBED``: a swap's new items), of each product
    of the lines it replaces (those ``args`` name), keeping the old line's features they said to keep
    (``narrowing.kept_as_said``), before the nearest to the line replaced is taken: the choices a customer who asked to
    hear their options is told (``chops.pipeline.listing``)."""
    sources, asked = list(sources), list(asked)
    fields = record_fields(sources, set(op.choice_names().values()))
    texts = descriptions(node for data in sources for node in records(data))
    found = {a: [str(v) for v in (args.get(a) or [])] for a in op.choice_pairs()}
    groups: dict[str, list[str]] = {}
    places: dict[str, list[str]] = {}
    replaced = {v for lines in found.values() for v in lines}
    for arg in op.choice_described():
        values = [v for v in values_in(sources, op.choice_keys()[arg]) if v not in replaced]  # no swap for itself
        fit = _fit(op, arg, values, found, fields, asked, texts, sources)
        kept = kept_as_said(fit.values, asked, names=fit.names, described=texts, old=fit.old, known=fit.known,
                            mentions=mentions)
        for name, group in by_name(kept, fit.names).items():
            if name in fit.placed:  # a product of the lines replaced
                groups.setdefault(name, []).extend(group)
                places.setdefault(name, fit.placed[name])
    return {name: Fitted(values, [texts.get(v, v) for v in values], places[name]) for name, values in groups.items()}


def _held(lines: list[str], names: dict[str, Any], texts: dict[str, str], asked: list[str]) -> list[str]:
    """The ``lines`` offered to be replaced, but of a product with several, the one the customer's ``asked`` words
    describe as held ("the 17-inch laptop", ``described.held_before``) where they do: its features alone are old.
    Told "change the 17-inch laptop to the 13-inch version" of an order holding both, every offered laptop's
    features counted as old, "13-inch" narrowed nothing and the 1.5B chose a 17-inch one (train task 35)."""
    out: list[str] = []
    for name, same in by_name(lines, names).items():
        out += held_before(name, {v: set(features(texts.get(v, ""))) - {name, v} for v in same}, asked) or same
    return out


def told_apart(values: list[str], names: dict[str, Any], sources: list[Any], message: str) -> list[str]:
    """``values`` with the lines of one name (two speakers of an order) told apart by the price the ``message`` compares
    ("the more expensive speaker", "the cheaper one"): the dearest or the cheapest of them, where each has a price and
    the message does not ask for all of them. Asked to return "the speaker that's more expensive", the 1.5B returned
    both (train task 35)."""
    side = next((how for option, how in comparisons(message, ()) if option == PRICE), 0)
    if not side:
        return values
    prices = record_fields(sources, {PRICE})[PRICE]
    out: list[str] = []
    for name, lines in by_name(values, names).items():
        priced = [v for v in lines if isinstance(prices.get(v), (int, float))]
        if len(lines) < 2 or len(priced) < len(lines) or _every_one(message, name):
            out += lines
        else:
            out.append((max if side > 0 else min)(priced, key=lambda v: prices[v]))
    return out


def _every_one(message: str, name: str) -> bool:
    """Whether a sentence of ``message`` that names ``name`` asks for every one of them ("both speakers", "all the
    speakers", "the cheaper ones"); "I got two tablets, I'd return the cheaper one" does not, nor "all the 13-inch
    options" in a sentence about a laptop."""
    about = [s for s in re.split(r"(?<=[.!?。！？;；])\s*", message) if mentions(s, name)]
    return any({"both", "all", "each", "every", "ones"} & set(re.findall(r"[\w-]+", s.lower())) for s in about)


def record_arg(op: Operation) -> str | None:
    """The argument naming the record ``op`` changes (the first whose record must be in some state), or None."""
    return next(iter(op.choice_states()), None)


def in_state(op: Operation, sources: list[Any]) -> list[str]:
    """The values of ``op``'s record argument that ``sources`` hold in a state it takes (``CHOICES_WHERE``: the pending
    orders of a cancel), first seen first."""
    arg = record_arg(op)
    if arg is None:
        return []
    states = op.choice_states()[arg]
    fields = record_fields(sources, states)
    return [v for v in values_in(sources, op.choice_keys().get(arg, ()))
            if all(fields[key].get(v) in allowed for key, allowed in states.items())]


def lines_of(op: Operation, record: Any, sources: list[Any]) -> dict[str, list[str]]:
    """``{argument: its values in the record whose id is ``record``, once per line}``, for each argument of ``op``
    with values there (an order's item ids for the lines of a return)."""
    found = {arg: _lines(op, arg, record, sources) for arg in op.choice_keys()}
    return {arg: values for arg, values in found.items() if values}


def _lines(op: Operation, arg: str, within: Any, sources: list[Any]) -> list[str]:
    """The values of ``arg`` (an order's lines) in the record whose id is ``within``, once per line."""
    return lines_in(sources, within, op.choice_keys()[arg])


def own_lines(op: Operation, options: dict[str, list[str]], sources: list[Any]) -> dict[str, set[str]]:
    """``{partner argument: values it must not take}``: when the record is known (one value offered for the pair's
    ``in``), each of its lines that is the only line of its ``by`` group (the order's one keyboard) can only pair
    with itself, and a swap to the item it already is the platform refuses ("choose a different option"): the
    1.5B, offered them first, chose them. With two lines of one product, each may become the other."""
    out: dict[str, set[str]] = {}
    for arg, pair in op.choice_pairs().items():
        within = options.get(pair["in"], ())
        if len(within) != 1:
            continue
        groups = record_fields(sources, {pair["by"]})[pair["by"]]
        lines = _lines(op, arg, within[0], sources)
        out[pair["partner"]] = {v for v in lines if all(x == v for x in lines if groups.get(x) == groups.get(v))}
    return out
