"""The words by which a request takes in more than it names one by one ("all my orders", "both", "two laptops", "the
rest"), kept in one place: each check builds the pattern of the lists it needs.

- ``whole.partial``: a part's cancel is no question where the request takes in ``EVERY`` item.
- ``which.unsure``: no "which one?" where it takes in every line, a count of them, or the rest.
- ``unspoken.unspoken``: products nobody named are no surprise where it takes in every item or all but some.
- ``fanout.quantified``: a write for each record where a ``QUANTIFIERS`` word or a count quantifies its noun.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

QUANTIFIERS = ("all", "every", "each", "both")  # before a noun: "all my orders", "both t-shirts"
EVERY = (*QUANTIFIERS, "everything", "whatever", "whole", "entire")
EVERY_ZH = ("全部", "所有")
COUNTS = ("two", "three")  # "it's two laptops"
ALL_BUT = ("rest", "except", "other than", "apart from", "besides", "other", "another")  # "everything but the lamp"


def pattern(words: Iterable[str], chinese: Iterable[str] = ()) -> re.Pattern[str]:
    """A case-blind pattern of the English ``words`` (whole words) and the ``chinese`` ones (anywhere)."""
    english = "|".join(re.escape(w) for w in words)
    return re.compile("|".join([rf"\b(?:{english})\b", *map(re.escape, chinese)]), re.IGNORECASE)
