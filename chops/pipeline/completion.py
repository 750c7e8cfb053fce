"""A record the customer named, taken whole: the parts of an address a plan left empty, from the one address of
the customer's data that the parts it gave match.

"Ship that order to my Chicago address" names an address the customer's profile or one of their orders holds, not
six typed values. A 1.5B model copies some parts (the street, the city) and writes null for the rest (the second
line), or mixes the parts of two of the customer's addresses (the new city with the old second line), and the
platform refuses the plan as missing a value: the customer is asked for what they already said, and says it again.
A pack declares the parts as one group (``CHOICES_RECORD``); after the model proposes, each group is completed from
the record of the seen data (the profile, the look-ups) that holds every part of the group and agrees with every
part the customer typed and with most of the parts given (case and spaces aside): its parts replace the ones given.
Nothing changes when no part was given, when no record agrees so, or when two different records agree equally (two
Houston addresses and only "Houston" given): the plan stays as proposed, and grounding and the platform judge it as
ever. A part the customer typed is never replaced: a new street in the same city is a new address. An optional part that
only repeats another's value, which the customer wrote once, is left empty (``repeated``).

The other way round, a value the customer must choose themself (``CHOICES_SAID``: the payment method a change is
paid or refunded with) is used only where their words name its record (``unnamed``), or name it as the record's
own (``original``: "the original payment method" is the order's); otherwise, where they have more than one to
choose from, it is dropped, and the reply asks for it instead of the model choosing for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from chops.domain.operations import Operation, named
from chops.pipeline.choices import Options, record_arg
from chops.pipeline.fallbacks import before_otherwise
from chops.pipeline.walk import alike_ids, records, stems, values_at


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _same(a: Any, b: Any) -> bool:
    return " ".join(str(a).split()).casefold() == " ".join(str(b).split()).casefold()


def completed(op: Operation, args: dict[str, Any], sources: Iterable[Any],
              typed: Callable[[str], bool] = lambda value: False) -> dict[str, Any] | None:
    """``args`` with each ``CHOICES_RECORD`` group taken from the one record of ``sources`` that agrees with the parts
    given (``typed``: whether the customer typed a value, which the record must then agree with), or None when
    nothing changes (see the module docstring)."""
    groups = op.choice_records()
    if not groups:
        return None
    sources = list(sources)
    out = dict(args)
    for fields in groups.values():
        given = {f: args[f] for f in fields if not _blank(args.get(f))}
        if not given:
            continue
        kept = {f for f, v in given.items() if typed(str(v))}
        scored: dict[tuple[str, ...], int] = {}
        for node in (n for data in sources for n in records(data)):
            if all(f in node for f in fields) and all(_same(node[f], given[f]) for f in kept):
                record = tuple(str(node[f]) for f in fields)
                scored[record] = sum(_same(node[f], v) for f, v in given.items())
        ranked = sorted(scored.values(), reverse=True)
        best = next((r for r, n in scored.items() if n == ranked[0]), None) if ranked else None
        # Most of the parts given, and no other record as many: the record the model copied from.
        if best is not None and 2 * ranked[0] > len(given) and (len(ranked) == 1 or ranked[1] < ranked[0]):
            out.update((f, value) for f, value in zip(fields, best) if f not in kept and value.strip())
    return out if out != args else None


# A record named by a word of it as the place it is ("my NYC address", "my default Chicago home", "to my Denver
# one"), not as where something is now ("the order sent to Houston"): the name, then a word for such a place (up to
# two words between), or "to my"/"to the" before it.
_PLACE_WORDS = r"address|home|house|apartment|flat|place|office|one"
_NAMED_AS = (r"(?:\b{name}\b(?:\s+[\w-]+){{0,2}}?\s+(?:{place})\b|\bto (?:my|the|our) (?:[\w-]+\s+)?{name}\b)")


def named_record(op: Operation, args: dict[str, Any], sources: Iterable[Any], text: str) -> dict[str, Any] | None:
    """``args`` with a ``CHOICES_RECORD`` group replaced by the one record of ``sources`` that ``text`` names as a
    place by a text of it (``_names_place``: the city, the state, or a text the record holds beside its parts, such as
    the city's nickname) or by its owner's id ("the same as order #W0000001": ``walk.alike_ids``), where the group
    proposed is another record; None when nothing changes, or where the text names several such records. Told "my
    laptop order to my NYC address", the 1.5B wrote the default Houston address, and the customer's yes sent the
    order back there (train task 112). Never the one the record changed holds now: "my pending order is going to a
    New York address, but I want it at my home address" names where it is, and the order's own address was written
    back as a change that changed nothing (our own conversations: eval/cases)."""
    out, sources = dict(args), list(sources)
    alike = {i.casefold() for i in alike_ids(text)}
    changed = str(args.get(arg)).casefold() if (arg := record_arg(op)) is not None else None
    for fields in op.choice_records().values():
        found: dict[tuple[str, ...], bool] = {}
        now: set[tuple[str, ...]] = set()
        for owner in (n for data in sources for n in records(data)):
            # The record itself, or one its owner holds (an order's address): named as a place, or by the owner's id.
            ids = {str(v).casefold() for v in owner.values() if isinstance(v, (str, int))}
            for node in [owner, *(v for v in owner.values() if isinstance(v, dict))]:
                if all(f in node for f in fields):
                    record = tuple(str(node[f]) for f in fields)
                    found[record] = found.get(record, False) or bool(node is not owner and ids & alike) or any(
                        _names_place(v, text) for v in node.values() if isinstance(v, str))
                    if node is not owner and changed in ids:
                        now.add(record)
        named = [r for r, said in found.items() if said and r not in now]
        if len(named) == 1 and tuple(str(args.get(f)) for f in fields) != named[0]:
            out.update(zip(fields, named[0]))
    return out if out != args else None


def _names_place(name: str, text: str) -> bool:
    """Whether ``text`` names a place by ``name`` (``_NAMED_AS``): a name of letters only, of 4 or more ("Chicago",
    "New York") in any case, or of 2 or 3 as written ("NYC", "LA", "NY"; not "in" for Indiana's "IN")."""
    if not re.fullmatch(r"[^\W\d_][^\d]+", name):
        return False
    pattern = _NAMED_AS.format(name=re.escape(name), place=_PLACE_WORDS)
    return re.search(pattern, text, re.IGNORECASE if len(name) >= 4 else 0) is not None


def repeated(op: Operation, args: dict[str, Any], texts: Iterable[str]) -> dict[str, Any] | None:
    """``args`` with each optional part of a ``CHOICES_RECORD`` group that repeats another part's value reset to its
    default, where no one of the customer's ``texts`` holds that value as often as the parts do; None when nothing
    changes; so too a part each comma-separated piece of which does. Given "101 Highway, New York, NY 10001", the 1.5B
    wrote "New York" as the address's second line and its city (train task 22); given "1234 Elm St, Springfield, IL,
    62701", "Springfield, IL, 62701" as the second line (train task 59)."""
    said = [" ".join(t.split()).casefold() for t in texts]
    fields_info = {info.alias or name: info for name, info in op.args_model.model_fields.items()}
    out = dict(args)
    for fields in op.choice_records().values():
        for f in fields:
            info, value = fields_info.get(f), out.get(f)
            if info is None or info.is_required() or _blank(value):
                continue
            # The value, or each of its comma-separated pieces ("Springfield, IL, 62701" as the second line too).
            pieces = [p for p in (x.strip() for x in str(value).split(",")) if p]
            if all(_said_less(piece, [out.get(g) for g in fields if g != f], said) for piece in pieces):
                out[f] = info.default
    return out if out != args else None


def retyped(op: Operation, args: dict[str, Any], texts: Iterable[str]) -> dict[str, Any] | None:
    """``args`` with each ``CHOICES_RECORD`` part that the customer's ``texts`` do not hold, but hold with other numbers
    in the same words ("445 Maple Drive" for the "443 Maple Drive" of their data), replaced by what they typed; None
    when nothing changes. Told "I might have typed my address wrong, it should be 445 Maple Drive, …", the 1.5B copied
    the profile's 443 and the change did nothing (train task 41)."""
    texts = list(texts)
    out = dict(args)
    for fields in op.choice_records().values():
        for f in fields:
            value = out.get(f)
            if not isinstance(value, str) or not re.search(r"\d", value) or not re.search(r"[^\W\d_]{3}", value) \
                    or any(value.casefold() in t.casefold() for t in texts):
                continue
            shape = re.compile(r"(?<!\w)" + re.sub(r"\d+", r"\\d+", re.escape(value)) + r"(?!\w)", re.IGNORECASE)
            typed = {m.group() for t in texts for m in shape.finditer(t)}
            if len(typed) == 1:
                out[f] = typed.pop()
    return out if out != args else None


def _said_less(value: str, others: list[Any], said: list[str]) -> bool:
    """Whether one of the ``others`` parts holds ``value`` too and no one of the customer's messages (``said``,
    folded) holds it as often as the parts do."""
    holders = 1 + sum(1 for p in others if not _blank(p) and _same(p, value))
    # The most any one message says it: a request split off the message repeats the message's words.
    whole = re.compile(rf"(?<!\w){re.escape(' '.join(value.split()).casefold())}(?!\w)")  # "IL" is not in "still"
    written = max((len(whole.findall(t)) for t in said), default=0)
    return holders > 1 and written < holders


def unnamed(op: Operation, args: dict[str, Any], sources: Iterable[Any], texts: Iterable[str],
            replaced: Mapping[str, str] | None = None) -> list[str]:
    """The ``CHOICES_SAID`` arguments of ``args`` whose value the customer's ``texts`` do not name: the value itself is
    not in them, and the words (four letters or more) and digit runs (four or more) of its own record (the one that
    holds it under the last key of a ``CHOICES_FROM`` path: a payment method's, not an order's payment history, whose
    "payment" every "payment method" would name) are in them less than another value's, or not at all ("use my gift
    card" names the gift cards, not the credit card whose record says "card" too; "visa", "1111" the visa ending
    1111). A value of no record (a cancel's reason) is named by its last word, an ending such as "ed" aside ("I
    don't need it" names "no longer needed"; "my order" does not name "ordered by mistake"). Where the words name the
    record's own value (``original``), that one is named, and another only by more of its words; a value with an
    ``original`` declaration is never asked for where the customer has one value to choose. A value ``replaced``
    (``TurnContext.replaced``) is none to weigh against, and its words name no other: the request still names the
    card a refusal was for ("my credit card"), whose "card" would name the gift card too."""
    sources, said, replaced = list(sources), list(texts), replaced or {}
    words = set().union(*(_marks(t) for t in said)) if said else set()
    out = []
    for arg in sorted(op.choice_said()):
        value = args.get(arg)
        own = original(op, arg, args, sources, said)
        if value is None or any(str(value) in t for t in said) or own == value:
            continue
        if not op.choice_keys().get(arg):  # a value of no record (a reason): named by its last word
            last = [_root(w) for w in stems(str(value).split()[-1])]
            # Not told from words of another script (不需要了): the model's reading stands, as before.
            if last and not any(_HAN.search(t) for t in said) and not any(_root(m) in last for m in words):
                out.append(arg)
            continue
        keys = {path.split(".")[-1] for path in op.choice_keys().get(arg, ())}
        held = _held(op, arg, sources)
        if op.choice_original().get(arg) and len(held) < 2:
            continue  # nothing to choose from: the one method the customer has pays the difference
        def marks(c: str) -> set[str]:  # the words of the record holding ``c``
            return set().union(*(_marks(t) for node in records(sources) if any(str(node.get(k)) == c for k in keys)
                                 for t in node.values() if isinstance(t, str)))
        # The words that named a replaced value name no other ("my credit card" is no "gift card" then).
        gone = replaced.get(arg)
        heard = words - marks(gone) if gone is not None and gone != str(value) else words
        hits = {c: len(heard & marks(c)) for c in ({*held} - {gone}) | {str(value)}}
        # Said as the record's own ("the card I paid with"), another is named only by more of its words ("my gift card").
        if not 0 < hits[str(value)] == max(hits.values()) or (own is not None and hits[str(value)] <= hits.get(own, 0)):
            out.append(arg)
    return out


def named_options(operations: Iterable[Operation], options: Options, sources: Iterable[Any],
                  texts: Iterable[str], replaced: Mapping[str, str] | None = None) -> Options:
    """``options`` (``choices.arg_options``) with each ``CHOICES_SAID`` argument offered only the values the customer's
    ``texts`` name (``unnamed``), where they name some, and of those the ones named first, where others are named only
    for a failed condition: told "my PayPal account", the 1.5B chose the card again, four times, each dropped and
    asked for again (train task 52). A value ``replaced`` (``TurnContext.replaced``: the card a refund was refused
    for, answered "PayPal then") is not offered where others are: the request still named the card first, and the
    1.5B was offered it alone turn after turn (own8)."""
    by_name = {op.name: op for op in operations}
    sources, texts, replaced = list(sources), list(texts), replaced or {}
    out = []
    for name, arg, values, groups in options:
        values = tuple(v for v in values if v != replaced.get(arg)) or values
        op = by_name.get(name)
        if op is not None and arg in op.choice_said():
            # Of the values the sources hold: an id typed for another argument ("#W1") names no payment method.
            held = _held(op, arg, sources)
            own = {original(op, arg, {spec["in"]: v}, sources, texts)
                   for spec in op.choice_original().values() for v in _within(options, name, spec["in"])}
            def named(value: str, said: list[str]) -> bool:
                return value in held and (value in own or not unnamed(op, {arg: value}, sources, said, replaced))
            values = tuple(v for v in values if named(v, texts)) or values
            # Of those, the ones named before the words for a failed condition ("my gift card; if that's not possible,
            # my credit card": the 1.5B chose the card, train task 58).
            first = [before_otherwise(t) for t in texts]
            values = tuple(v for v in values if named(v, first)) or values
        out.append((name, arg, values, groups))
    return tuple(out)


def still_replaced(operations: Iterable[Operation], replaced: Mapping[str, str], sources: Iterable[Any],
                   answer: str | None) -> dict[str, str]:
    """``replaced`` (``TurnContext.replaced``) without the values the customer's ``answer`` names itself: "I said pay
    it with my gift card", after the gift card was refused, insists on it; "PayPal then" replaces the card."""
    sources = list(sources)
    return {arg: v for arg, v in replaced.items() if answer is None or all(
        unnamed(op, {arg: v}, sources, [answer]) for op in operations if arg in op.choice_said())}


def _within(options: Options, name: str, arg: str) -> tuple[str, ...]:
    """The values ``options`` offers ``name``'s argument ``arg`` (the orders a swap may be of)."""
    return next((values for n, a, values, _ in options if (n, a) == (name, arg)), ())


def original(op: Operation, arg: str, args: dict[str, Any], sources: Iterable[Any], texts: Iterable[str]) -> str | None:
    """The value of ``arg`` the customer's ``texts`` name as the record's own (``CHOICES_ORIGINAL``: "the original
    payment method", "the one I paid with": the first value at its path in the record ``args`` names, the order's
    first payment's method), or None when they say no such words or the record is not in ``sources``."""
    spec = op.choice_original().get(arg)
    within = args.get(spec["in"]) if spec else None
    if within is None or not any(named(w, t) for w in spec["words"] for t in texts):
        return None
    return own_value(op, arg, within, sources)


def own_value(op: Operation, arg: str, within: Any, sources: Iterable[Any]) -> str | None:
    """The record ``within``'s own value of ``arg`` (``CHOICES_ORIGINAL``: the first value at its path in that record,
    an order's first payment's method), or None where ``arg`` declares none or the record is not in ``sources``."""
    spec = op.choice_original().get(arg)
    for node in records(list(sources)) if spec and within is not None else ():
        if str(node.get(spec["in"])) == str(within) and (found := values_at(node, spec["at"])):
            return found[0]
    return None


def _held(op: Operation, arg: str, sources: list[Any]) -> set[str]:
    """The values of ``arg`` that ``sources`` hold (its ``CHOICES_FROM`` paths)."""
    return {v for data in sources for path in op.choice_keys().get(arg, ()) for v in values_at(data, path)}


_HAN = re.compile(r"[\u4e00-\u9fff]")


def _root(word: str) -> str:
    """``word`` without an ending of inflection ("needed", "needing": "need")."""
    return re.sub(r"(?:ed|ing|es)$", "", word) if len(word) > 5 else word


def _marks(text: str) -> set[str]:
    """What in ``text`` can name a record: its words (``stems``) and its runs of four digits or more."""
    return stems(text) | set(re.findall(r"\d{4,}", text))

