"""The price the customer asked for: a swap's new item on the wrong side of its old line's price ("only if they're
cheaper") or of a bound they set ("if it's less than 200 bucks") is refused before it is described
(``chops.pipeline.kinds.unasked_refusal``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.described import features
from chops.pipeline.relative import PRICE, comparisons
from chops.pipeline.swapped import swapped_lines
from chops.pipeline.walk import mentions


def against_price(op: Operation, args: Mapping[str, Any], texts: Iterable[str], sources: Iterable[Any]) -> str | None:
    """"cheaper" or "more expensive" where the customer's words about a swapped line's product ask for a new item on
    that side of the line's price ("only if they're cheaper", "a less expensive one") and the one proposed is not;
    else None. Asked for boots "of the same size and material, but only if they're cheaper", the 1.5B chose dearer
    boots of another material (none was cheaper), and the customer's yes committed them (train task 54)."""
    for line in swapped_lines(op, args, texts, sources):
        was, now = _price(line.was), _price(line.now)
        side = next((how for option, how in comparisons(" ".join(line.sentences), ()) if option == PRICE
                     and abs(how) == 1), 0)
        if side and was is not None and now is not None and (now - was) * side <= 0:
            return "cheaper" if side < 0 else "more expensive"
    return None


# A price bound the customer sets ("if it's less than 200 bucks", "under $50", "at least $30"): the word, the amount.
_BOUND = re.compile(r"\b(less than|under|below|cheaper than|no more than|at most|up to|within|more than|over|above|"
                    r"at least)\s+(?:\$\s?(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s*(?:bucks|dollars|usd)\b)",
                    re.IGNORECASE)
_AT_MOST = {"no more than", "at most", "up to", "within"}  # the bound itself is within it
_AT_LEAST = {"more than", "over", "above", "at least"}


def bounded(texts: Iterable[str]) -> bool:
    """Whether the customer's ``texts`` set a price bound (``_BOUND``): the new item is theirs to leave to us then."""
    return any(_BOUND.search(t) for t in texts)


def over_budget(op: Operation, args: Mapping[str, Any], texts: Iterable[str],
                sources: Iterable[Any]) -> tuple[str, str, str] | None:
    """(the bound, the price, the new item's options) where the customer's words about a swapped line's product bound
    the new item's price ("if it's less than 200 bucks I want to exchange it", "at least $30") and the one proposed is
    outside it; else None. Told "if it's less than 200 bucks, exchange my keyboard for it; if not, return it", the 1.5B
    proposed the cheapest keyboard at $226.11 (train task 89)."""
    for line in swapped_lines(op, args, texts, sources):
        now, options = _price(line.now), line.now.split(";")[0].strip()
        # Only a sentence naming the product: "the order must fit within $1150" bounds the total (train task 37).
        said = " ".join(s for s in line.sentences if mentions(s, line.name))
        for word, dollars, bare in _BOUND.findall(said) if now is not None else ():
            bound, word = float((dollars or bare).replace(",", "")), word.lower()
            above = now > bound if word in _AT_MOST else now >= bound
            below = now < bound if word == "at least" else now <= bound
            if below if word in _AT_LEAST else above:
                return f"{word} ${bound:,.2f}", f"${now:,.2f}", options
    return None


def _price(description: str) -> float | None:
    """A variant's price: its feature that starts with "$"."""
    found = next((f for f in features(description) if f.startswith("$")), None)
    try:
        return float(found[1:].replace(",", "")) if found else None
    except ValueError:
        return None
