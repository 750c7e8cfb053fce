"""What a proposed value may be grounded in (``Evidence``: the customer's words, the values looked up, the pack's
clock) and how each built-in value kind grounds one (``chops.domain.values`` registers them)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from chops.domain.dates import dates_written
from chops.domain.words import amounts_written, languages, numbers_written, spelled_in


@dataclass(frozen=True)
class Evidence:
    """What a proposed value may be grounded in: the customer's own messages of this conversation, the values the
    profile and its look-ups returned, and the pack's clock (``now``), against which relative dates are read."""

    texts: tuple[str, ...] = ()
    known: frozenset[str] = frozenset()
    now: dt.datetime | None = None
    seen: tuple[Any, ...] = ()  # what the profile and the look-ups returned, as data (the records ids are of)
    languages: tuple[str, ...] = ()  # whose word data reads the texts; () every installed language's
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def memo(self, key: str, make: Callable[[], Any]) -> Any:
        """``make()`` once per evidence (the dates and amounts of the texts are read once, whatever the walk)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]


def amount(value: Any) -> Decimal | None:
    """``value`` as a ``Decimal`` (a float by its shortest repr), or None when it is no number."""
    if isinstance(value, bool):
        return None
    try:
        return Decimal(repr(value) if isinstance(value, float) else str(value).replace(",", "").strip())
    except (InvalidOperation, ValueError):
        return None


def known_amounts(evidence: Evidence) -> list[Decimal]:
    """The amounts of the evidence: each number the customer wrote and each number-like value a look-up listed."""
    def make() -> list[Decimal]:
        found = [a for a in (amount(v) for v in evidence.known) if a is not None]
        return found + [Decimal(str(n)) for t in evidence.texts for n in (*numbers_written(t), *amounts_written(t))]
    return evidence.memo("amounts", make)


def dates_named(evidence: Evidence) -> set[str]:
    """The ISO days the customer's words name, read against the clock, with the looked-up values that are days."""
    def make() -> set[str]:
        days = {v[:10] for v in evidence.known if _is_day(v[:10])}
        for text in evidence.texts:
            days |= dates_written(text, evidence.now, evidence.languages or languages())
        return days
    return evidence.memo("dates", make)


def _is_day(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def ground_text(value: Any, evidence: Evidence, options: Mapping[str, Any]) -> Any:
    if str(value) in evidence.known:
        return value
    return spelled_in(str(value), evidence.texts)


def ground_id(value: Any, evidence: Evidence, options: Mapping[str, Any]) -> Any:
    """An identifier the customer typed or a look-up listed; one they must have chosen (``said``) only where they
    typed it or named its record by a word no sibling record has ("the card ending in 2135", "my Mastercard", "the
    gift card"): the value a look-up merely listed is no choice of theirs."""
    if not options.get("said"):
        return ground_text(value, evidence, options)
    if spelled_in(str(value), evidence.texts) is not None:
        return value
    said = " ".join(evidence.texts).lower()
    # Latin edges are word edges; a Chinese one is none ("用尾号9981的卡" names 9981).
    return value if any(re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", said)
                        for w in distinctive(value, evidence.seen)) else None


def distinctive(value: Any, seen: Any) -> set[str]:
    """The words (of three letters or more, or runs of three digits or more) of the records holding ``value`` that
    none of their siblings (the other records of the same list) holds."""
    found: set[str] = set()
    for records in _lists(seen):
        own = [r for r in records if value in r.values()]
        others = [r for r in records if value not in r.values()]
        for record in own:
            found |= _words(record, value) - set().union(*(_words(o, None) for o in others))
    return found


def _lists(data: Any) -> list[list[Mapping[str, Any]]]:
    found: list[list[Mapping[str, Any]]] = []
    if isinstance(data, Mapping):
        data = list(data.values())
    if isinstance(data, (list, tuple)):
        records = [d for d in data if isinstance(d, Mapping)]
        if records:
            found.append(records)
        for item in data:
            found += _lists(item)
    return found


def _words(record: Mapping[str, Any], value: Any) -> set[str]:
    text = " ".join(str(v) for v in record.values() if v != value and isinstance(v, (str, int, float)))
    return {w for w in re.findall(r"[a-z]{3,}|\d{3,}", text.lower())}


def ground_number(value: Any, evidence: Evidence, options: Mapping[str, Any]) -> Any:
    if str(value) in evidence.known:
        return value
    said = evidence.memo("numbers", lambda: {n for t in evidence.texts for n in numbers_written(t)})
    number = amount(value)
    return value if number is not None and number in said else None


def ground_money(value: Any, evidence: Evidence, options: Mapping[str, Any]) -> Any:
    number = amount(value)
    if number is None:
        return None
    return value if any(abs(number - a) <= Decimal("0.005") for a in known_amounts(evidence)) else None


def ground_date(value: Any, evidence: Evidence, options: Mapping[str, Any]) -> Any:
    text = value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else str(value).strip()
    return text if text[:10] in dates_named(evidence) else None


def ground_choice(value: Any, evidence: Evidence, options: Mapping[str, Any]) -> Any:
    """A choice the customer must name (``said``) is grounded where their words name it: the value itself, a word of
    it as a word's stem ("change_of_plan" by "my plans changed", "basic_economy" by "basic"), or one of the pack's
    ``words`` for it (option ``words``: {value: [words]}); one they did not name is asked for (where the pack gives no
    words, their answer to that question is taken as it is read: ``chops.pipeline.read``)."""
    if not options.get("said") or str(value) in evidence.known:
        return value
    if ground_text(value, evidence, options) is not None:
        return value
    said = " ".join(evidence.texts).lower()
    words = [w for w in re.split(r"[\W_]+", str(value).lower()) if len(w) >= 4]
    if any(re.search(rf"\b{re.escape(w[:max(4, len(w) - 2)])}", said) for w in words):
        return value
    # The pack's words for it ("sick" and 生病 name a health reason): its business's vocabulary, any language.
    named = (options.get("words") or {}).get(str(value)) or ()
    return value if any((re.search(rf"\b{re.escape(w.lower())}", said) if w.isascii() else w in said)
                        for w in named) else None
