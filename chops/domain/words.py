"""The words a generic check reads in a customer's message, in any language the agent knows: numbers, whole-token
spellings and calendar days. The words themselves are data, one file a language (``chops/lang/<code>.toml``);
adding a language is adding its file. Business nouns are never here: they are the pack's.

* A value is *spelled* in a text when it occurs there as a whole token: a Latin edge must be a word boundary ("Li"
  is not in "Liang"), a CJK edge need not be (Chinese has no spaces), except for a value of one CJK character.
* A *number written* is a whole digit token ("4" is not in "40" nor "4.5"), a number word of a language's data
  ("nine", "forty") or a numeral of a language's digits and units ("四十", "第九", "一百零五").
* A *date written* is ``chops.domain.dates``'s.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

LANG_DIR = Path(__file__).resolve().parents[1] / "lang"
TRIM = " \t\r\n.,;:!?\"'`()[]{}，。；：！？、（）《》“”"
LATIN = "0-9A-Za-z\u00c0-\u024f"  # letters and digits of Latin-script words
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


@lru_cache(maxsize=None)
def language(code: str) -> dict[str, Any]:
    """The word data of language ``code`` (``chops/lang/<code>.toml``)."""
    return tomllib.loads((LANG_DIR / f"{code}.toml").read_text(encoding="utf-8"))


def languages() -> tuple[str, ...]:
    """The codes of the languages whose word data is installed."""
    return tuple(sorted(p.stem for p in LANG_DIR.glob("*.toml")))


@lru_cache(maxsize=None)
def _number_words() -> dict[str, int]:
    words: dict[str, int] = {}
    for code in languages():
        words.update({w: n for w, n in language(code).get("numbers", {}).items() if isinstance(n, int)})
    return words


@lru_cache(maxsize=None)
def _numerals() -> list[tuple[dict[str, int], dict[str, int], str, tuple[str, ...], re.Pattern[str]]]:
    found = []
    for code in languages():
        data = language(code).get("numbers", {})
        if isinstance(data.get("digits"), dict):
            digits, units = data["digits"], data.get("units", {})
            found.append((digits, units, data.get("ordinal", ""), tuple(data.get("measure_words", ())),
                          re.compile("[" + "".join((*digits, *units)) + "]+")))
    return found


def numeral_value(run: str, digits: dict[str, int], units: dict[str, int]) -> int | None:
    """The value of a numeral written with ``digits`` and falling ``units`` ("四十", "十五", "一百零五", "二〇");
    None when malformed ("三四" is "three or four": digit by digit only with a zero)."""
    zeros = [ch for ch, n in digits.items() if n == 0]
    if not any(ch in units for ch in run):
        if len(run) > 1 and not any(ch in zeros for ch in run):
            return None
        return int("".join(str(digits[ch]) for ch in run))
    total, digit, last_unit = 0, None, 10 ** 9
    for ch in run:
        if ch in digits:
            if digit not in (None, 0):
                return None  # two digits in a row inside a unit numeral
            digit = digits[ch]
        else:
            unit = units[ch]
            if unit >= last_unit:
                return None  # units must fall
            total += (1 if digit is None else digit) * unit
            digit, last_unit = None, unit
    return total + (digit or 0)


def numbers_written(text: str) -> set[int]:
    """Every whole integer written in ``text``: digits, a number word, a numeral of a language's data."""
    found = {int(m) for m in re.findall(r"(?<![\d.])\d{1,9}(?!\.?\d)", text)}
    words = _number_words()
    found |= {words[w] for w in re.findall(r"[a-z]+", text.lower()) if w in words}
    for digits, units, ordinal, measures, pattern in _numerals():
        for m in pattern.finditer(text):
            single = len(m.group()) == 1 and digits.get(m.group()) == 1
            counted = (ordinal and text[m.start() - len(ordinal): m.start()] == ordinal) \
                or text[m.end(): m.end() + 1] in measures
            if single and not counted:
                continue
            value = numeral_value(m.group(), digits, units)
            if value is not None:
                found.add(value)
    return found


def amounts_written(text: str) -> set[float]:
    """Every number with decimals written in ``text`` ("$49.99", "1,628.50"), beside the whole ones."""
    return {float(m.replace(",", "")) for m in re.findall(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+", text)}


def _pattern(value: str) -> re.Pattern[str] | None:
    """The whole-token pattern of ``value`` (see the module docstring), or None if it is empty."""
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
    """``(start, end)`` of every whole-token occurrence of ``value`` in ``text``."""
    pattern = _pattern(value)
    if pattern is None:
        return []
    return [m.span() for m in re.finditer(pattern.pattern, text, re.IGNORECASE if ignore_case else 0)]


def spelled_in(value: str, texts: Iterable[str]) -> str | None:
    """The customer's own spelling of ``value`` (trimmed of punctuation) where it occurs as a whole token in one of
    ``texts``: the same case first ("Will" the name, not "will" the verb), then any case; else None."""
    pattern = _pattern(str(value).strip(TRIM))
    if pattern is None:
        return None
    texts = list(texts)
    for pat in (pattern, re.compile(pattern.pattern, re.IGNORECASE)):
        for text in texts:
            m = pat.search(text)
            if m:
                return " ".join(m.group().split())
    return None


def qualified(text: str) -> list[str]:
    """The words of ``text`` that make an agreement conditional or change what it agrees to ("but", "only",
    "instead", 但是, 只, 换成: a language's ``agreement.qualifiers``), in the languages' order; [] for a plain yes."""
    found = []
    lowered = text.lower()
    for code in languages():
        for word in language(code).get("agreement", {}).get("qualifiers", ()):
            spaced = word.isascii()
            if re.search(rf"\b{re.escape(word)}\b" if spaced else re.escape(word), lowered):
                found.append(word)
    return found
