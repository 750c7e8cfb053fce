"""The fields of the look-ups' records a question names by every word of their key ("the total of the remaining
items" names ``remaining_items_total``), and the sums it asks of their entries ("the total price of all my grills"):
what the answer to it says."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from chops.pipeline.context import Candidate, Step
from chops.pipeline.described import plain_words, said_words, says
from chops.pipeline.walk import stems

NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")  # a number as written: "1,497.65"
_SPECIFIC = 2  # words a key needs to name its field alone: "total" may be another total than the order's
# Words asking for a sum ("the total price of all the grills", "how much for both lamps altogether"); "all" alone is
# not one ("all the details of my orders").
_SUM_WORDS = frozenset({"total", "sum", "altogether", "combined", "overall", "both"})


def numbers(text: str) -> set[float]:
    """The numbers ``text`` writes, as values ("$1,497.65" is 1497.65)."""
    return {float(n.replace(",", "")) for n in NUMBER.findall(text)}


def _named(question: str, lookups: Iterable[Step]) -> Iterator[tuple[str, list[tuple[str, Any]]]]:
    """(the record's look-up arguments, its scalar fields whose key's words all are words of ``question``) of each of
    the ``lookups``' records, the newest of the same arguments."""
    asked = plain_words(question)
    for label, data in _records(lookups).items():
        yield label, [(key, value) for key, value in data.items() if isinstance(value, (int, float, str))
                      and not isinstance(value, bool) and plain_words(key) <= asked]


def asks_sum(question: str) -> bool:
    """Whether ``question`` asks for a sum (``_SUM_WORDS``)."""
    return not plain_words(question).isdisjoint(_SUM_WORDS)


def _records(lookups: Iterable[Step]) -> dict[str, dict[str, Any]]:
    """Each look-up's record by its arguments, the newest of the same arguments."""
    return {", ".join(str(v) for v in step.args.values()): step.result.data for step in lookups
            if step.result is not None and step.result.outcome.succeeded and isinstance(step.result.data, dict)}


def _entries(lookups: Iterable[Step]) -> Iterator[dict[str, Any]]:
    """The entries of the lists of the ``lookups``' records (an order's items), the newest record of the same
    arguments once."""
    for record in _records(lookups).values():
        yield from (e for v in record.values() if isinstance(v, list) for e in v if isinstance(e, dict))


def sums_asked(question: str, lookups: Iterable[Step]) -> list[str]:
    """The sums ``question`` asks of the ``lookups``' records, as "<name> <number's key> total: <sum>": of the entries
    of their lists (an order's items, ``_entries``) that a question asking a sum (``_SUM_WORDS``) names by every word
    of a text of theirs (``stems``: "bookshelves" of an item "Bookshelf"), where at least two do, across the records.
    The number summed is the entries' one number (an item's price), or the one the question names where they have
    several. Asked "the total price for all the grills you bought", the 1.5B answered with the whole order's total, one
    grill beside a camera (train task 76): the executor is shown the sums beside the look-ups, and its answer must say
    one (``unstated``). Only of a question: asked to return both vacuum cleaners and to say "the total amount of the
    refund", the 1.5B, shown their sum, answered with it and returned nothing (train task 46)."""
    if not asks_sum(question):
        return []
    asked, named = plain_words(question), stems(question)
    found: dict[tuple[str, str], list[Decimal]] = {}
    for entry in _entries(lookups):
        amounts = [(k, v) for k, v in entry.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(amounts) > 1:
            amounts = [(k, v) for k, v in amounts if plain_words(k) <= asked]
        name = next((v for v in entry.values() if isinstance(v, str) and stems(v) and stems(v) <= named), None)
        if name is not None and len(amounts) == 1:
            found.setdefault((name, amounts[0][0]), []).append(Decimal(str(amounts[0][1])))
    return [f"{name} {key} total: {float(sum(values))}" for (name, key), values in found.items() if len(values) > 1]


def fields_asked(question: str, lookups: Iterable[Step]) -> str | None:
    """The fields of the ``lookups``' records that ``question`` names by every word of their key ("total" in "what's
    the total price of my order now?"), as the record's id and "key: value" (the newest record of an id once), or None
    where it names none. Said where every answer the model wrote stated a number nothing it read holds: asked for the
    order's total after an item change, the 1.5B wrote $1257.87 twice, the look-up showing 1288.65 (train task 63)."""
    found = {record: "; ".join(f"{key.replace('_', ' ')}: {value}" for key, value in fields)
             for record, fields in _named(question, lookups) if fields}
    return "\n".join(f"{record}: {parts}" if record else parts for record, parts in found.items()) or None


def unstated(question: str, answer: str, lookups: Iterable[Step], sums: Sequence[str] = ()) -> list[str]:
    """The fields (``key: value``) ``question`` names by a key of two words or more that ``answer`` states no value of
    (a number as a number, "$1,497.65" of 1497.65; a text as it is): asked "what's the total I paid for the remaining
    items?" after a return, the 1.5B answered with the refund, the order's ``remaining_items_total`` beside it, and
    the verifier passed it (train task 46). The ``sums`` it asks (``sums_asked``) in their place, where it asks one.
    Empty where the question names no such field, or the answer states one."""
    if sums:  # the records' own totals are not what "the total of all my grills" asks
        return [] if numbers(answer) & {v for s in sums for v in numbers(s.rpartition(": ")[2])} else list(sums)
    named = [(key, value) for _, fields in _named(question, lookups) for key, value in fields
             if len(plain_words(key)) >= _SPECIFIC]
    stated = numbers(answer)
    said = any(float(value) in stated if isinstance(value, (int, float)) else str(value).casefold() in answer.casefold()
               for _, value in named)
    return [] if said else list(dict.fromkeys(f"{key.replace('_', ' ')}: {value}" for key, value in named))


def unlike(answer: str, lookups: Iterable[Step]) -> list[str]:
    """What the look-ups say of entries of one name (an order's two T-shirts) that differ in a labelled feature
    ("material: cotton", "material: polyester"), where ``answer`` says that feature of some of them and not of the
    others: each one's, as "name (its other features): label: value". Asked which two T-shirts were in the order and
    what they are made of, the 1.5B said both were cotton, the black one polyester, and the verifier passed it (train
    task 24).
    The entries counted are those ``answer`` describes by another feature some entry of the name lacks, or, where it
    describes none so, all of them ("the blue T-shirt is cotton" speaks of that one only). Empty where nothing is so."""
    said, named = said_words([answer]), stems(answer)
    groups: dict[str, list[dict[str, str]]] = {}
    for entry in _entries(lookups):
        texts = [v for v in entry.values() if isinstance(v, str)]
        name = next((t for t in texts if ":" not in t and stems(t) and stems(t) <= named), None)
        pairs = {label.strip(): value.strip() for t in texts if ":" in t
                 for label, _, value in (part.partition(":") for part in t.split(",")) if value.strip()}
        if name is not None and pairs:
            groups.setdefault(name, []).append(pairs)
    missing: list[str] = []
    for name, entries in groups.items():
        for label in dict.fromkeys(lb for pairs in entries for lb in pairs):
            # Described by a feature of another label that not every entry of the name has ("blue", "size S").
            described = [e for e in entries if any(lb != label and says(v, said) and any(
                o.get(lb) != v for o in entries) for lb, v in e.items())] or entries
            values = {e.get(label) for e in described} - {None}
            stated = {v for v in values if says(v, said)}
            if len(described) > 1 and stated and stated != values:
                # Each one's, the one said right too: told only the other's, the 1.5B said that of both instead.
                missing += [f"{name} ({', '.join(v for lb, v in e.items() if lb != label)}): {label}: {e[label]}"
                            for e in described if label in e]
    return missing


def found(question: str, cand: Candidate) -> str | None:
    """What ``cand``'s look-ups say of what was asked, where its answer cannot be sent: the sums ``question`` asks,
    the fields it names (``fields_asked``), or each like entry's feature the answer gave them all (``unlike``); None
    where they say nothing of it."""
    return "; ".join(cand.sums) or fields_asked(question, cand.lookups) \
        or "; ".join(unlike(cand.answer or "", cand.lookups)) or None
