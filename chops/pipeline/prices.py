"""The price the customer asked for: a swap's new item on the wrong side of its old line's price ("only if they're
cheaper") or of a bound they set ("if it's less than 200 bucks") is refused before it is described
(``chops.pipeline.kinds.unasked_refusal``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.described import about, descriptions, features
from chops.pipeline.relative import PRICE, comparisons
from chops.pipeline.walk import mentions, names_of, record_fields, records


def against_price(op: Operation, args: Mapping[str, Any], texts: Iterable[str], sources: Iterable[Any]) -> str | None:
    """"cheaper" or "more expensive" where the customer's words about a swapped line's product ask for a new item on
    that side of the line's price ("only if they're cheaper", "a less expensive one") and the one proposed is not;
    else None. Asked for boots "of the same size and material, but only if they're cheaper", the 1.5B chose dearer
    boots of another material (none was cheaper), and the customer's yes committed them (train task 54)."""
    for sentences, _, was, now, _ in _priced_pairs(op, args, texts, sources):
        side = next((how for option, how in comparisons(" ".join(sentences), ()) if option == PRICE and abs(how) == 1),
                    0)
        if side and was is not None and now is not None and (now - was) * side <= 0:
            return "cheaper" if side < 0 else "more expensive"
    return None


def _priced_pairs(op: Operation, args: Mapping[str, Any], texts: Iterable[str],
                  sources: Iterable[Any]) -> Iterator[tuple[list[str], str, float | None, float | None, str]]:
    """For each line a swap replaces: the sentences of the customer's ``texts`` about its product (``about``), its
    name, the line's price, the new item's, and the new item's options (its description's first part)."""
    texts, sources, keys = list(texts), list(sources), op.choice_names()
    lines = descriptions(node for data in sources for node in records(data))
    fields = record_fields(sources, set(keys.values()))  # the names the pack declares (``CHOICES_MENTIONED``)
    known = {str(n) for names in fields.values() for field in names.values() for n in names_of(field)}
    for old_arg, pair in op.choice_pairs().items():
        names = fields.get(keys.get(old_arg, ""), {})
        for old, new in zip(args.get(old_arg) or [], args.get(pair["partner"]) or []):
            name = str(names.get(str(old)))
            described = lines.get(str(new), "")
            yield (about(texts, name, known, mentions), name, _price(lines.get(str(old), "")), _price(described),
                   described.split(";")[0].strip())


# A price bound the customer sets ("if it's less than 200 bucks", "under $50", "at least $30"): the word, the amount.
_BOUND = re.compile(r"\b(less than|under|below|cheaper than|no more than|at most|up to|within|more than|over|above|"
                    r"at least)\s+(?:\$\s?(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s*(?:bucks|dollars|usd)\b)",
                    re.IGNORECASE)
_AT_MOST = {"no more than", "at most", "up to", "within"}  # the bound itself is within it
_AT_LEAST = {"more than", "over", "above", "at least"}


def over_budget(op: Operation, args: Mapping[str, Any], texts: Iterable[str],
                sources: Iterable[Any]) -> tuple[str, str, str] | None:
    """(the bound, the price, the new item's options) where the customer's words about a swapped line's product bound
    the new item's price ("if it's less than 200 bucks I want to exchange it", "at least $30") and the one proposed is
    outside it; else None. Told "if it's less than 200 bucks, exchange my keyboard for it; if not, return it", the 1.5B
    proposed the cheapest keyboard at $226.11 (train task 89)."""
    for sentences, name, _, now, options in _priced_pairs(op, args, texts, sources):
        # Only a sentence naming the product: "the order must fit within $1150" bounds the total (train task 37).
        said = " ".join(s for s in sentences if mentions(s, name))
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
