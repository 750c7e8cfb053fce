"""Variants described relative to the line they replace: "a bigger one", "less bright", "a slightly lower
resolution", "a larger frame", "500 fewer pieces".

Asked for a desk lamp "less bright" than its medium one, the 1.5B chose the high one, and the verifier passed it:
the described narrowing (``chops.pipeline.described``) matches the values a customer names, and these name none.
So a word of comparison ("less", "lower", "bigger", "brighter") with the option it is about, by the option's name
as the old line labels it ("brightness: medium", "frame size: medium"), keeps the variants whose value there is
above or below the old line's. "Bigger", "larger" and "smaller" with no option named are about the size or the
capacity. Values are ordered by their number ("750ml", "20MP", "1500") or on a known scale ("low, medium, high",
"S, M, L"); where the old value or a variant's has no place in an order, nothing is narrowed, nor is it where no
variant is on the wanted side. Whole words only, and only a word followed by (or itself naming) an option:
"I'd like more help" compares nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from chops.pipeline.described import about, by_name, features

_UP = {"bigger", "larger", "higher", "more", "brighter", "longer", "greater", "taller", "wider", "heavier",
       "louder", "stronger", "faster"}
_DOWN = {"smaller", "lower", "less", "fewer", "dimmer", "shorter", "narrower", "lighter", "quieter", "weaker",
         "slower"}
_SIZED = {"bigger", "larger", "smaller"}  # with no option named: the size or the capacity
_SIZES = ("size", "capacity")
SCALES = (("low", "medium", "high"), ("small", "medium", "large"), ("xs", "s", "m", "l", "xl", "xxl"))
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_LABELLED = re.compile(r"^\s*([^:,;]+):\s*(.+?)\s*$")
_WORDS = re.compile(r"[a-z]+")


def labels(texts: Iterable[str]) -> dict[str, str]:
    """``{option: value}`` of a line's labelled parts ("brightness: medium, color: white"), in their order."""
    out: dict[str, str] = {}
    for text in texts:
        for part in re.split(r"[,;]", text):
            m = _LABELLED.match(part)
            if m:
                out.setdefault(m.group(1).strip().lower(), m.group(2))
    return out


def comparisons(text: str, options: Iterable[str]) -> list[tuple[str, int]]:
    """(option, +1 for above or -1 for below) for each comparison ``text`` makes about one of ``options``."""
    options = list(options)
    words = _WORDS.findall(text.lower())
    out: list[tuple[str, int]] = []
    for i, word in enumerate(words):
        if word not in _UP and word not in _DOWN:
            continue
        # "less bright", "lower resolution": the next word; "brighter": the word itself, its "er" cut.
        about_words = [w for w in (words[i + 1] if i + 1 < len(words) else "", word[:-2], word[:-3]) if len(w) >= 4]
        option = next((o for o in options for w in about_words
                       if any(part.startswith(w) or w.startswith(part) for part in o.split() if len(part) >= 4)), None)
        if option is None and word in _SIZED:
            option = next((o for o in options if any(s in o.split() for s in _SIZES)), None)
        if option is not None and (option, 1 if word in _UP else -1) not in out:
            out.append((option, 1 if word in _UP else -1))
    return out


def rank(value: str, others: Iterable[str]) -> float | None:
    """Where ``value`` stands among ``others`` (all of one option): its number, else its place on a scale that
    holds them all, else None."""
    values = [value, *others]
    numbers = [_NUMBER.search(v) for v in values]
    if all(numbers):
        return float(numbers[0].group())
    lowered = [v.strip().lower() for v in values]
    scale = next((s for s in SCALES if all(v in s for v in lowered)), None)
    return float(scale.index(lowered[0])) if scale else None


def compared(values: list[str], texts: Iterable[str], *, names: dict[str, Any], described: dict[str, str],
             old: dict[str, tuple[str, dict[str, str]]], known: set[str],
             mentions: Callable[[str, str], bool]) -> list[str]:
    """``values`` kept, per name, where they stand as the customer's ``texts`` (``about`` that name) compare them
    to the old line (``old``: name -> (its item id, its ``labels``)); a value's option is its description's
    feature at the option's place among the labels. Order kept."""
    texts = list(texts)
    drop: set[str] = set()
    for name, group in by_name(values, names).items():
        if name not in old:
            continue
        old_id, options = old[name]
        for option, direction in comparisons(" ".join(about(texts, name, known, mentions)), options):
            place = list(options).index(option)
            at = {v: features(described.get(v, "")) for v in group}
            at = {v: f[place] for v, f in at.items() if len(f) > place}
            mine = options[option]
            if old_id in described and features(described[old_id])[place:place + 1] != [mine]:
                continue  # the variant lines do not list the options in the labels' order
            ranks = {v: rank(x, [mine, *at.values()]) for v, x in at.items()}
            base = rank(mine, at.values())
            if base is None or None in ranks.values():
                continue
            side = {v for v, r in ranks.items() if (r - base) * direction > 0}
            if side:
                drop |= set(group) - side
    return [v for v in values if v not in drop]
