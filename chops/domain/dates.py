"""Calendar days a customer's words name, read against the pack's clock, in any language whose word data
(``chops/lang/<code>.toml``, section ``dates``) says how it writes them:

* a month's name and a day ("May 20", "20th of May", "May 20, 2024"), or numbers with the language's marks
  (5月20日, 2024年5月20号), or numbers in its numeric order ("5/20");
* a day of the month alone ("the 22nd");
* a relative day ("tomorrow", 后天);
* a weekday ("Friday", "next Friday", 周五, 下周五).

Where the words leave the year open, a day on or after today is meant (a trip is booked ahead; a birth date gives its
year). "Next Friday" is read both ways people mean it (the coming one and the one a week later): a value is grounded
when the customer's words can mean it, and a write is still confirmed by them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

from chops.domain.words import language, numbers_written

_DAY = r"(\d{1,2})"


def dates_written(text: str, now: dt.datetime | None = None, codes: Iterable[str] = ("en", "zh")) -> set[str]:
    """The ISO days ``text`` names (see the module docstring), ``now`` the pack's clock (None: the machine's)."""
    today = (now or dt.datetime.now()).date()
    days = {f"{y}-{m}-{d}" for y, m, d in re.findall(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)", text)}
    lowered = text.lower()
    for code in codes:
        data = language(code).get("dates")
        if data:
            days |= {d.isoformat() for d in _days(lowered, today, data)}
    return days


def _days(text: str, today: dt.date, data: dict[str, Any]) -> Iterator[dt.date]:
    yield from _named_months(text, today, data)
    yield from _marked(text, today, data)
    yield from _numeric(text, today, data)
    yield from _relative(text, today, data)
    yield from _weekdays(text, today, data)


def _alternation(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True) if w)


@lru_cache(maxsize=None)
def _named_patterns(months: tuple[str, ...], suffixes: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    month, suffix = _alternation(months), _alternation(suffixes)
    day = rf"{_DAY}(?:{suffix})?" if suffix else _DAY
    year = r"(?:,?\s+(\d{4}))?"
    return (re.compile(rf"\b({month})\.?\s+{day}\b{year}"),
            re.compile(rf"\b{day}\s+(?:of\s+)?({month})\b{year}"),
            re.compile(rf"\bthe\s+{day}\b" if suffix else r"(?!)"))


def _named_months(text: str, today: dt.date, data: dict[str, Any]) -> Iterator[dt.date]:
    months = data.get("months") or {}
    if not months:
        return
    by_month, by_day, alone = _named_patterns(tuple(months), tuple(data.get("day_suffixes") or ()))
    for m in by_month.finditer(text):
        yield from _day(today, m.group(3), months[m.group(1)], m.group(2))
    for m in by_day.finditer(text):
        yield from _day(today, m.group(3), months[m.group(2)], m.group(1))
    for m in alone.finditer(text):
        if m.group(0).rstrip()[-1].isalpha():  # "the 22nd", not "the 2 bags"
            month = today.month if int(m.group(1)) >= today.day else today.month % 12 + 1
            yield from _day(today, None, month, m.group(1))


def _marked(text: str, today: dt.date, data: dict[str, Any]) -> Iterator[dt.date]:
    month_mark, day_marks = data.get("month_mark"), data.get("day_marks") or ()
    if not month_mark or not day_marks:
        return
    number = r"([0-9]{1,2}|[^\s0-9]{1,3}?)"
    year = rf"(?:(\d{{4}}){re.escape(data.get('year_mark', ''))})?" if data.get("year_mark") else "()"
    pattern = rf"{year}{number}{re.escape(month_mark)}{number}(?:{_alternation(day_marks)})"
    for m in re.finditer(pattern, text):
        month, day = _number(m.group(2)), _number(m.group(3))
        if month is not None and day is not None:
            yield from _day(today, m.group(1) or None, month, day)


def _number(text: str) -> int | None:
    found = numbers_written(text if not text.isdigit() else text)
    return int(text) if text.isdigit() else (min(found) if len(found) == 1 else None)


def _numeric(text: str, today: dt.date, data: dict[str, Any]) -> Iterator[dt.date]:
    if not data.get("numeric"):
        return
    month_first = data["numeric"].startswith("month")
    for m in re.finditer(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}))?(?![\d/])", text):
        month, day = (m.group(1), m.group(2)) if month_first else (m.group(2), m.group(1))
        yield from _day(today, m.group(3), int(month), day)


def _relative(text: str, today: dt.date, data: dict[str, Any]) -> Iterator[dt.date]:
    words = data.get("relative_days") or {}
    spaced = bool(data.get("months"))  # a language written with spaces matches whole words
    for word, offset in words.items():
        pattern = rf"\b{re.escape(word)}\b" if spaced else re.escape(word)
        if re.search(pattern, text):
            yield today + dt.timedelta(days=int(offset))


def _weekdays(text: str, today: dt.date, data: dict[str, Any]) -> Iterator[dt.date]:
    names = data.get("weekdays") or {}
    if not names:
        return
    prefixes = data.get("weekday_prefixes")
    spaced = prefixes is None
    name = _alternation(names)
    before = _alternation(data.get("next_week") or ()), _alternation(w for w in data.get("this_week") or () if w)
    if spaced:
        pattern = rf"\b(?:({before[0]})\s+|(?:{before[1]})\s+)?({name})\b"
    else:
        pattern = rf"(?:({before[0]})|(?:{before[1]}))?(?:{_alternation(prefixes)})({name})"
    for m in re.finditer(pattern, text):
        ahead = (names[m.group(2)] - today.weekday()) % 7 or 7
        coming = today + dt.timedelta(days=ahead)
        yield coming
        if m.group(1):  # "next Friday": the coming one, or the one of next week
            yield coming + dt.timedelta(days=7)
            monday_next = today + dt.timedelta(days=7 - today.weekday())
            yield monday_next + dt.timedelta(days=names[m.group(2)])


def _day(today: dt.date, year: str | None, month: int, day: Any) -> Iterator[dt.date]:
    """The day, in ``year`` or else the first year from ``today`` on that has it on or after today."""
    try:
        if year:
            yield dt.date(int(year), int(month), int(day))
            return
        found = dt.date(today.year, int(month), int(day))
        yield found if found >= today else dt.date(today.year + 1, int(month), int(day))
    except ValueError:
        return
