"""Deterministic grounding: an argument value the user never wrote is treated as not given.

A small model happily fills a required argument with a plausible value (the user's current marking
problem, a name from the profile). The Api cannot tell, so the check happens here: every value must
occur in the user's own messages of this conversation as a whole token, not inside a longer one.
An ungrounded value becomes ``None``, which the Api refuses as a missing argument and the reply asks
for it. The rules, per kind of value:

* Latin text (names, schools): the value must start and end on a word boundary, so "Li" is not
  grounded by "Liang" nor "Ann" by "Anna". A word boundary is a neighbour that is not a Latin letter
  or digit; a CJK neighbour counts as a boundary ("我想成为Li的副领队" grounds "Li"). An occurrence
  with the same case as the value wins; otherwise a case-insensitive one is taken, and the user's
  own spelling is returned either way (the Api matches names exactly, so the value it receives is
  always text the user typed).
* CJK text: Chinese has no spaces, and telling whether "李明" in "李明华" is a whole name needs a
  segmenter and a name dictionary, so a CJK edge of a value only needs the value to appear as one
  contiguous run. The exception is a value of a single CJK character: it is grounded only when no
  CJK character stands next to it (a one-character "李" is part of almost any sentence naming 李明).
* Integers: a whole number token — digits ("4" is not grounded by "40" nor "4.5"), a small English
  number word ("nine", "forty"), or a Chinese numeral ("四十", "第九", "一百零五"). A lone "一" is
  not a number unless written "第一": it is the first character of everyday words (一下, 一些).
* Looked up: a value equal to one a look-up returned in this conversation (an item id from the order,
  a payment method id from the profile: ``known``) is grounded as it stands, though the user never
  typed it; the executor read it, it did not invent it.
* Lists: each element by the rules above; one ungrounded element leaves the whole list ungrounded
  (half of "exchange these two items" is not the request).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Any

_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen twenty").split()
NUMBER_WORDS = {w: i for i, w in enumerate(_WORDS)} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
                                                      "seventy": 70, "eighty": 80, "ninety": 90,
                                                      "hundred": 100}
ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
             "八": 8, "九": 9}
ZH_UNITS = {"十": 10, "百": 100}
TRIM = " \t\r\n.,;:!?\"'`()[]{}，。；：！？、（）《》“”"
LATIN = "0-9A-Za-z\u00c0-\u024f"  # letters and digits of Latin-script words
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_ZH_RUN = re.compile("[" + "".join(ZH_DIGITS) + "".join(ZH_UNITS) + "]+")


def zh_number(run: str) -> int | None:
    """The value of a Chinese numeral such as "四十", "十五", "一百零五" or "二〇"; None if malformed."""
    if not any(ch in ZH_UNITS for ch in run):
        if len(run) > 1 and not any(ch in "零〇" for ch in run):
            return None  # "三四" is "three or four"; digit by digit only with a zero, as in "二〇"
        return int("".join(str(ZH_DIGITS[ch]) for ch in run))
    total, digit, last_unit = 0, None, 1000
    for ch in run:
        if ch in ZH_DIGITS:
            if digit not in (None, 0):
                return None  # two digits in a row inside a unit numeral
            digit = ZH_DIGITS[ch]
        else:
            unit = ZH_UNITS[ch]
            if unit >= last_unit:
                return None  # "十十", "十百": units must fall
            total += (1 if digit is None else digit) * unit
            digit, last_unit = None, unit
    return total + (digit or 0)


def numbers_in(text: str) -> set[int]:
    """Every whole integer written in ``text``: digits, a small English number word, a Chinese numeral."""
    found = {int(m) for m in re.findall(r"(?<![\d.])\d{1,9}(?!\.?\d)", text)}
    found |= {NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in NUMBER_WORDS}
    for m in _ZH_RUN.finditer(text):
        if m.group() == "一" and text[m.start() - 1: m.start()] != "第":
            continue
        value = zh_number(m.group())
        if value is not None:
            found.add(value)
    return found


def _pattern(value: str) -> re.Pattern[str] | None:
    """The token-boundary pattern of ``value`` (see the module docstring), or None if it is empty."""
    words = value.split()
    if not words:
        return None
    body = r"\s+".join(re.escape(w) for w in words)
    first, last = words[0][0], words[-1][-1]
    if re.match(f"[{LATIN}]", first):
        body = f"(?<![{LATIN}])" + body
    if re.match(f"[{LATIN}]", last):
        body += f"(?![{LATIN}])"
    if len(words) == 1 and len(words[0]) == 1 and re.match(f"[{CJK}]", first):
        body = f"(?<![{CJK}]){body}(?![{CJK}])"
    return re.compile(body)


def token_spans(value: str, text: str, *, ignore_case: bool = False) -> list[tuple[int, int]]:
    """``(start, end)`` of every whole-token occurrence of ``value`` in ``text`` (the rules above)."""
    pattern = _pattern(value)
    if pattern is None:
        return []
    flags = re.IGNORECASE if ignore_case else 0
    return [m.span() for m in re.finditer(pattern.pattern, text, flags)]


def _find(value: str, texts: Iterable[str]) -> str | None:
    """The user's own spelling of ``value`` if it occurs as a whole token in one of ``texts``, else None."""
    pattern = _pattern(value)
    if pattern is None:
        return None
    texts = list(texts)
    folded = re.compile(pattern.pattern, re.IGNORECASE)
    for pat in (pattern, folded):  # the same case first: "Will" the name, not "will" the verb
        for text in texts:
            m = pat.search(text)
            if m:
                return " ".join(m.group().split())
    return None


def ground_args(args: dict[str, Any], user_texts: list[str],
                known: Collection[Any] = ()) -> tuple[dict[str, Any], list[str]]:
    """``(grounded args, names of the values dropped)``.

    Strings are trimmed of surrounding punctuation and replaced by the user's spelling (the Api
    matches names exactly); a value equal to one of ``known`` (what look-ups returned) stands as it
    is; a value found nowhere becomes ``None``.
    """
    out: dict[str, Any] = {}
    dropped: list[str] = []
    numbers = set().union(*(numbers_in(t) for t in user_texts)) if user_texts else set()
    looked_up = {str(v) for v in known if v is not None and not isinstance(v, bool)}
    for name, value in args.items():
        if isinstance(value, str) and not value.strip(TRIM):
            value = None  # a blank string is "not given", like null
        if isinstance(value, list):
            items = [_ground_value(v, user_texts, numbers, looked_up) for v in value]
            grounded = items if items and all(v is not None for v in items) else None
        else:
            grounded = _ground_value(value, user_texts, numbers, looked_up)
        out[name] = grounded
        if value is not None and grounded is None:
            dropped.append(name)
    return out, dropped


def _ground_value(value: Any, user_texts: list[str], numbers: set[int], looked_up: set[str]) -> Any:
    """One scalar value, grounded (the user's spelling or the looked-up value) or None."""
    if value is None or isinstance(value, bool):  # a boolean is never a meaningful argument (and bool is an int)
        return None
    if str(value) in looked_up:
        return value
    if isinstance(value, int):
        return value if value in numbers else None
    return _find(str(value).strip(TRIM), user_texts)
