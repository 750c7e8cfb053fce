"""Deterministic grounding: an argument value the user never wrote is treated as not given.

A small model happily fills a required argument with a plausible value (the user's current marking
problem, a name from the profile). The Api cannot tell, so the check happens here: every value must
occur in the user's own messages of this conversation as a whole token, not inside a longer one.
An ungrounded value becomes ``None``, which the Api refuses as a missing argument and the reply asks
for it. The rules, per kind of value (the words are ``chops.domain.words``'s):

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

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from chops.domain.values import Evidence, ground

from chops.domain.words import CJK, LATIN, TRIM, numbers_written, spelled_in, token_spans  # noqa: F401 (re-exported)

numbers_in = numbers_written  # the name the pipeline's checks use
_find = spelled_in


def ground_args(args: dict[str, Any], user_texts: list[str], known: Collection[Any] = (),
                model: type[BaseModel] | None = None, now: datetime | None = None,
                seen: Sequence[Any] = ()) -> tuple[dict[str, Any], list[str]]:
    """``(grounded args, names of the values dropped)``.

    Strings are trimmed of surrounding punctuation and replaced by the user's spelling (the Api
    matches names exactly); a value equal to one of ``known`` (what look-ups returned) stands as it
    is; a value found nowhere becomes ``None``. With the operation's argument ``model``, every value at any depth
    is grounded by the value kind its field declares (``chops.domain.values``: a date against the clock ``now``,
    an amount within half a cent of one seen, an id the customer chose by a word of its record in ``seen``); dropped
    values are named by their paths (``passengers.1.dob``).
    """
    if model is not None:
        blank = {k: (None if isinstance(v, str) and not v.strip(TRIM) else v) for k, v in args.items()}
        looked_up = frozenset(str(v) for v in known if v is not None and not isinstance(v, bool))
        return ground(model, blank, Evidence(texts=tuple(user_texts), known=looked_up, now=now, seen=tuple(seen)))
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
