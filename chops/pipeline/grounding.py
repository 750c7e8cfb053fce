"""Deterministic grounding: an argument value the user never wrote is treated as not given.

A small model happily fills a required argument with a plausible value (the user's current marking
problem, a name from the profile). The Api cannot tell, so the check happens here: every string value
must occur in the user's own messages of this conversation (case-insensitive), every integer must
occur there as a number token (digits or a small number word). An ungrounded value becomes ``None``,
which the Api refuses as a missing argument and the reply asks for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen twenty").split()
NUMBER_WORDS = {w: i for i, w in enumerate(_WORDS)} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
                                                      "seventy": 70, "eighty": 80, "ninety": 90,
                                                      "hundred": 100}
_TRIM = " \t\r\n.,;:!?\"'`()[]{}"


def numbers_in(text: str) -> set[int]:
    """Every integer written in ``text``, as digits or as a small English number word."""
    found = {int(m) for m in re.findall(r"(?<![\d.])\d{1,9}(?![\d])", text)}
    found |= {NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in NUMBER_WORDS}
    return found


def _find(value: str, texts: Iterable[str]) -> str | None:
    """The user's own spelling of ``value`` if it occurs in one of ``texts``, else None."""
    needle = " ".join(value.split()).casefold()
    for text in texts:
        flat = " ".join(text.split())
        pos = flat.casefold().find(needle)
        if pos >= 0:
            return flat[pos: pos + len(needle)]
    return None


def ground_args(args: dict[str, Any], user_texts: list[str]) -> tuple[dict[str, Any], list[str]]:
    """``(grounded args, names of the values dropped)``.

    Strings are trimmed of surrounding punctuation and replaced by the user's spelling (the Api
    matches names exactly); a value found nowhere in ``user_texts`` becomes ``None``.
    """
    out: dict[str, Any] = {}
    dropped: list[str] = []
    numbers = set().union(*(numbers_in(t) for t in user_texts)) if user_texts else set()
    for name, value in args.items():
        if isinstance(value, str) and not value.strip(_TRIM):
            value = None  # a blank string is "not given", like null
        if value is None:
            grounded = None
        elif isinstance(value, bool):  # never a meaningful CPHOS argument (and bool is an int)
            grounded = None
        elif isinstance(value, int):
            grounded = value if value in numbers else None
        else:
            grounded = _find(str(value).strip(_TRIM), user_texts)
        out[name] = grounded
        if value is not None and grounded is None:
            dropped.append(name)
    return out, dropped
