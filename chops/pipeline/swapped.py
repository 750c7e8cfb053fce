"""The lines a swap replaces, each with what the customer said of its product, and the options they asked to keep.

Asked to change a bookshelf to a 4 ft one "with the same material and color, and if that's not available cancel the
whole order", the 1.5B proposed a 4 ft bookshelf of another material, the only one of that material being sold out.
So a swap whose new item differs from the old line in an option the customer said to keep the same (``unkept``) is
refused before it is described, with what they said to do then (``chops.pipeline.kinds.unasked_refusal``). So too one
whose product the customer said to change only if a variant with the features they named is there, doing something
with another product of the swap otherwise ("if there's no keyboard that is clicky, full size and RGB, then only
exchange the thermostat"), where none available has them all (``unmet``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from chops.domain.operations import Operation
from chops.pipeline.described import about, descriptions, features, mentioned_features, plain_words
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


def known_names(fields: dict[str, dict[str, Any]]) -> set[str]:
    """Every name in ``fields`` (``walk.record_fields`` of the keys an operation declares ``CHOICES_MENTIONED``: an
    order's item names, the profile's overview of them)."""
    return {str(n) for names in fields.values() for field in names.values() for n in names_of(field)}


def swapped_lines(op: Operation, args: Mapping[str, Any], texts: Iterable[str],
                  sources: Iterable[Any]) -> Iterator[Swapped]:
    """Each line the swap ``op`` with ``args`` replaces, paired with its new item (``Swapped``)."""
    texts, sources, keys = list(texts), list(sources), op.choice_names()
    lines = descriptions(node for data in sources for node in records(data))
    fields = record_fields(sources, set(keys.values()))  # the names the pack declares (``CHOICES_MENTIONED``)
    known = known_names(fields)
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
        options, same = kept(line, sources)
        changed = [o for o in same if value_of(line.now, o, options) not in (None, options[o])]
        if changed:
            return (", ".join(f"{o} {options[o]}" for o in changed),
                    ", ".join(f"{o} {value_of(line.now, o, options)}" for o in changed))
    return None


def kept(line: Swapped, sources: list[Any]) -> tuple[dict[str, str], list[str]]:
    """(the old line's labelled options, those the customer's words about its product say stay the same), the latter
    only where the old line's text lists its options in the labels' order (a value is read by its place)."""
    options = labels(t for node in holding(sources, line.old) for t in node.values() if isinstance(t, str))
    same = [o for o, how in comparisons(" ".join(line.sentences), options) if how == 0 and o != PRICE]
    return options, ([] if any(value_of(line.was, o, options) != options[o] for o in same) else same)


def unsaid(op: Operation, args: Mapping[str, Any], texts: Iterable[str],
           sources: Iterable[Any]) -> tuple[str, str] | None:
    """(the product, the new item's options the old line lacks) where a swapped line's new item differs from it only
    in options the customer's ``texts`` neither mention nor compare ("a bigger one", "the cheapest"), and they typed
    no id of it; else None. A message split as "Change the backpack I got together with the vacuum cleaner" (its verb
    was "cancel", said in the sentence before) had the 1.5B exchange the backpack for a green leather one, and the
    scripted yes committed it (train task 103): what a product becomes is the customer's to say."""
    texts, sources = list(texts), list(sources)
    joined = " ".join(texts)
    said = plain_words(joined)
    for line in swapped_lines(op, args, texts, sources):
        old = set(features(line.was))
        new = [f for f in _options(line.now) if f not in old]
        # A word of a new option is enough where the old line's options lack it: "one that works with Google Home"
        # asks for "Google Assistant" (train tasks 0, 1).
        words = {w for f in new for w in plain_words(f) if len(w) >= 4 and w.isalpha()} \
            - {w for f in old for w in plain_words(f)}
        if not new or line.new in joined or mentioned_features(", ".join(new), texts) or words & said:
            continue
        options, _ = kept(line, sources)
        if any(how != 0 for _, how in comparisons(joined, options)):
            continue
        return line.name, ", ".join(new)
    return None


# The variant a customer's change depends on: "if there's no keyboard that is clicky, full size and RGB backlit, then
# …", "if you don't have a red one in XL, …". What is described ends at ", then" where that follows, else at a comma.
LACK = r"\bif (?:there(?:'s| is| are) no|there (?:isn'?t|aren'?t)(?: an?y?)?|you (?:don'?t|do not) have(?: an?y?)?)\s+"
_LACKING = (re.compile(LACK + r"(?P<what>[^.;!?\n]*?),\s*then\b", re.IGNORECASE),
            re.compile(LACK + r"(?P<what>[^,.;!?\n]+)", re.IGNORECASE))


def unmet(op: Operation, args: Mapping[str, Any], texts: Iterable[str],
          sources: Iterable[Any]) -> tuple[str, str] | None:
    """(what the customer's change of a product depends on, why it is not there) where a swapped line's product is
    one they said to change only if a variant with the features they name exists (``_LACKING``), and no variant of
    it listed without the op's excluded marker (``CHOICES_DESCRIBED``'s ``excluded``: "NOT available") has every one
    of those features; else None."""
    excluded = next((d["excluded"] for d in op.choice_described().values() if d.get("excluded")), None)
    sources = list(sources)
    lines = list(swapped_lines(op, args, texts, sources))
    for line in lines:
        others = {other.name for other in lines if other.name != line.name}
        depends = _depends_on(line.sentences, line.name, others)
        variants = _beside(sources, line.new) if depends else []
        for what in depends:
            wanted = _wanted_by_place(what, variants)
            if not wanted:
                continue
            there = [v for v in variants if not (excluded and excluded in v)]
            if not any(all(f in wanted[i] for i, f in enumerate(_options(v)) if i in wanted) for v in there):
                return what, f"no {what} is available"
    return None


def _depends_on(sentences: list[str], name: str, others: set[str]) -> list[str]:
    """The variants of ``name`` the ``sentences`` make the change depend on ("keyboard that is clicky, full size and
    RGB backlit"), where what the customer said to do then names another product of the swap ("then only exchange the
    thermostat"); not where it takes another variant ("… I'd go for the one with no backlight": train task 0)."""
    found = []
    for sentence in sentences:
        match = _LACKING[0].search(sentence) or _LACKING[1].search(sentence)
        if match is not None and mentions(match.group("what"), name) \
                and any(mentions(sentence[match.end():], other) for other in others):
            found.append(match.group("what").strip())
    return found


def _beside(sources: list[Any], item: str) -> list[str]:
    """The texts keyed beside ``item``'s own in the look-ups (its product's variant lines, ``item``'s among them)."""
    return [text for data in sources for node in records(data) if item in node
            for text in node.values() if isinstance(text, str)]


def _options(variant: str) -> list[str]:
    """A variant line's option values, in their places ("clicky, none, full size; $269.16; available")."""
    return features(variant.split(";")[0])


def _wanted_by_place(what: str, variants: list[str]) -> dict[int, set[str]]:
    """``{place: the option values there that ``what`` mentions}`` over the ``variants``."""
    wanted: dict[int, set[str]] = {}
    for variant in variants:
        said = mentioned_features(variant.split(";")[0], [what])
        for i, value in enumerate(_options(variant)):
            if value in said:
                wanted.setdefault(i, set()).add(value)
    return wanted
