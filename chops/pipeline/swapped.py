"""The lines a swap replaces, each with what the customer said of its product, and the options they asked to keep.

Asked to change a bookshelf to a 4 ft one "with the same material and color, and if that's not available cancel the
whole order", the 1.5B proposed a 4 ft bookshelf of another material, the only one of that material being sold out.
So a swap whose new item differs from the old line in an option the customer said to keep the same (``unkept``) is
refused before it is described, with what they said to do then (``chops.pipeline.kinds.unasked_refusal``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from chops.domain.operations import Operation
from chops.pipeline.described import about, descriptions
from chops.pipeline.relative import PRICE, comparisons, labels, value_of
from chops.pipeline.walk import holding, mentions, names_of, record_fields, records


class Swapped(NamedTuple):
    """One line a swap replaces: the sentences of the customer's texts about its product (``described.about``), the
    product's name, the old line's id and text, the new item's id and text (``described.descriptions``)."""

    sentences: list[str]
    name: str
    old: str
    was: str
    new: str
    now: str


def swapped_lines(op: Operation, args: Mapping[str, Any], texts: Iterable[str],
                  sources: Iterable[Any]) -> Iterator[Swapped]:
    """Each line the swap ``op`` with ``args`` replaces, paired with its new item (``Swapped``)."""
    texts, sources, keys = list(texts), list(sources), op.choice_names()
    lines = descriptions(node for data in sources for node in records(data))
    fields = record_fields(sources, set(keys.values()))  # the names the pack declares (``CHOICES_MENTIONED``)
    known = {str(n) for names in fields.values() for field in names.values() for n in names_of(field)}
    for old_arg, pair in op.choice_pairs().items():
        names = fields.get(keys.get(old_arg, ""), {})
        for old, new in zip(args.get(old_arg) or [], args.get(pair["partner"]) or []):
            name = str(names.get(str(old)))
            yield Swapped(about(texts, name, known, mentions), name, str(old), lines.get(str(old), ""), str(new),
                          lines.get(str(new), ""))


def unkept(op: Operation, args: Mapping[str, Any], texts: Iterable[str],
           sources: Iterable[Any]) -> tuple[str, str] | None:
    """(the options the customer said to keep, with the old line's values; the new item's values there) where a
    swapped line's new item differs from it in an option the customer's words about its product say stays the same
    ("the same material and color": ``relative.comparisons``); else None."""
    sources = list(sources)
    for line in swapped_lines(op, args, texts, sources):
        options = labels(t for node in holding(sources, line.old) for t in node.values() if isinstance(t, str))
        same = [o for o, how in comparisons(" ".join(line.sentences), options) if how == 0 and o != PRICE]
        # Only where the old line's text lists its options in the labels' order: a value is read by its place.
        if any(value_of(line.was, o, options) != options[o] for o in same):
            continue
        changed = [o for o in same if value_of(line.now, o, options) not in (None, options[o])]
        if changed:
            return (", ".join(f"{o} {options[o]}" for o in changed),
                    ", ".join(f"{o} {value_of(line.now, o, options)}" for o in changed))
    return None
