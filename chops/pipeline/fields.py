"""The fields of the look-ups' records a question names by every word of their key ("the total of the remaining
items" names ``remaining_items_total``): what the answer to it says."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from chops.pipeline.context import Step
from chops.pipeline.described import plain_words

NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")  # a number as written: "1,497.65"
_SPECIFIC = 2  # words a key needs to name its field alone: "total" may be another total than the order's


def numbers(text: str) -> set[float]:
    """The numbers ``text`` writes, as values ("$1,497.65" is 1497.65)."""
    return {float(n.replace(",", "")) for n in NUMBER.findall(text)}


def _named(question: str, lookups: Iterable[Step]) -> Iterator[tuple[str, list[tuple[str, Any]]]]:
    """(the record's look-up arguments, its scalar fields whose key's words all are words of ``question``) of each of
    the ``lookups``' records, oldest first."""
    asked = plain_words(question)
    for step in lookups:
        data = step.result.data if step.result is not None and step.result.outcome.succeeded else None
        if isinstance(data, dict):
            yield ", ".join(str(v) for v in step.args.values()), [
                (key, value) for key, value in data.items()
                if isinstance(value, (int, float, str)) and not isinstance(value, bool) and plain_words(key) <= asked]


def fields_asked(question: str, lookups: Iterable[Step]) -> str | None:
    """The fields of the ``lookups``' records that ``question`` names by every word of their key ("total" in "what's
    the total price of my order now?"), as the record's id and "key: value" (the newest record of an id once), or None
    where it names none. Said where every answer the model wrote stated a number nothing it read holds: asked for the
    order's total after an item change, the 1.5B wrote $1257.87 twice, the look-up showing 1288.65 (train task 63)."""
    found = {record: "; ".join(f"{key.replace('_', ' ')}: {value}" for key, value in fields)
             for record, fields in _named(question, lookups) if fields}
    return "\n".join(f"{record}: {parts}" if record else parts for record, parts in found.items()) or None


def unstated(question: str, answer: str, lookups: Iterable[Step]) -> list[str]:
    """The fields (``key: value``) ``question`` names by a key of two words or more that ``answer`` states no value of
    (a number as a number, "$1,497.65" of 1497.65; a text as it is): asked "what's the total I paid for the remaining
    items?" after a return, the 1.5B answered with the refund, the order's ``remaining_items_total`` beside it, and
    the verifier passed it (train task 46). Empty where the question names no such field, or the answer states one."""
    named = [(key, value) for _, fields in _named(question, lookups) for key, value in fields
             if len(plain_words(key)) >= _SPECIFIC]
    stated = numbers(answer)
    said = any(float(value) in stated if isinstance(value, (int, float)) else str(value).casefold() in answer.casefold()
               for _, value in named)
    return [] if said else list(dict.fromkeys(f"{key.replace('_', ' ')}: {value}" for key, value in named))
