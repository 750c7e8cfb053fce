"""Which listed value the customer described: the features they typed pick a product's variant.

A look-up lists a product's variants as short lines ("purple, S, polyester, v-neck; $53.48; available"), and a
1.5B model asked for "purple, size S, v-neck, polyester" copied the id of another line of the list (a blue
crew-neck M). So an argument the pack marks ``CHOICES_DESCRIBED`` keeps, among its values of each name (each
product), only those whose listed features the customer's words mention most (``narrowing.narrowed``), and never a value
listed with the pack's ``excluded`` marker ("NOT available") while another is left.

What counts is the features the customer asked for that the line being replaced does not have: "the blue one,
size S … for a red one, XXL" mentions blue and S too, which the old line has; red and XXL are what they want, and
"Google Home instead of Apple HomeKit" must not prefer the HomeKit variants.
Features ranked as alternatives ("battery first, then USB, then AC adapter": several values in the same place of
the lines) narrow nothing, nor does a sentence about another product ("… and the luggage set in black"). A word
the customer did not type narrows nothing either ("Google Home" is not "Google Assistant", "brighter" no
brightness): with no feature mentioned, every value stays (but the excluded), and the model chooses as before.
Matching is by whole words, case-, hyphen- and plural-blind ("v-neck", "V neck", "vneck"; "1.5 liter"), a word
may stand between two of a feature's ("not water resistant" is "not resistant"), and an apostrophe joins ("it's"
is not the size "S"). A number said as a difference is no feature ("1000 more pieces" is not the 1000-piece
puzzle), nor is a feature said as the one not wanted ("art rather than animals", "instead of Apple HomeKit"): a
value that has such a feature is left out where one without it is left.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

K = TypeVar("K")

_LABEL = re.compile(r"^[^:]*:\s*")  # "size: S" -> "S"
_PARTS = re.compile(r"[,;]")
_NON_WORD = re.compile(r"[^0-9a-z]+")
_SENTENCE = re.compile(r"(?<=[.!?;:\n])\s+|\n")
# After a number, a word that makes it a difference ("1000 more pieces", "2 sizes bigger"), not a value.
_RELATIVE = {"more", "fewer", "less", "extra", "additional", "bigger", "smaller", "larger", "higher", "lower"}
_NOT_WANTED = ("rather than", "instead of", "other than")  # what follows is the one the customer does not want
_ARTICLES = {"a", "an", "the", "my"}
_NO_WORD = "#"  # stands in for a word that names nothing (no feature's plain form holds it)


def features(description: str) -> list[str]:
    """The comma- or semicolon-separated parts of ``description``, each without a ``name:`` label."""
    return [f for f in (_LABEL.sub("", p).strip() for p in _PARTS.split(description)) if f]


# A unit after a number as customers and shops spell it: "a 4 foot one", "4-feet" and "4 ft" (train task 88: the 1.5B
# chose a 6 ft bookshelf for "4 foot"), "2 liters" and "2 litre".
_UNITS = ((re.compile(r"(\d) ?(?:feet|foot|ft)\b"), r"\1 ft"), (re.compile(r"(\d) ?(?:liters?|litres?)\b"), r"\1 l"),
          (re.compile(r"(\d) ?(?:inches|inch)\b"), r"\1 inch"))


def plain(text: str) -> str:
    """Lower-case words split at anything else, a unit after a number in one spelling (``_UNITS``), a plural's "s"
    cut ("2 pieces", "2 piece")."""
    text = _NON_WORD.sub(" ", text.lower())
    for unit, spelling in _UNITS:
        text = unit.sub(spelling, text)
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in text.split())


def plain_words(text: str) -> set[str]:
    """The words of ``text`` as ``plain`` writes them (lower case, a plural's "s" cut)."""
    return set(plain(text).split())


# A size's letters as a customer says them: "a medium one" is size M (train task 23); "extra large" is read as "xl"
# first (``said_words``), so its "large" is no L.
_SIZES = {"s": ("small",), "m": ("medium",), "l": ("large",)}
_SIZE_WORDS = ((re.compile(r"\b(?:extra extra|double extra) large\b"), "xxl"),
               (re.compile(r"\bextra large\b"), "xl"), (re.compile(r"\bextra small\b"), "xs"))


def forms(feature: str) -> set[str]:
    """A feature as the customer may type it: words as they are, run together, a number apart from its unit, or a
    size's letters in words."""
    base = plain(feature)
    return {f for f in (base, base.replace(" ", ""), plain(re.sub(r"(\d)([a-z])", r"\1 \2", base)),
                        *_SIZES.get(base, ())) if f}


def said_words(texts: Iterable[str]) -> str:
    """The words of ``texts`` as features are matched against: ``plain``, sizes said in words as their letters, a
    number said as a difference blanked out; one space before, between and after each."""
    text = plain(" ".join(texts).replace(chr(39), "").replace(chr(0x2019), ""))
    for words, letters in _SIZE_WORDS:
        text = words.sub(letters, text)
    said = text.split()
    # A number followed by a word of difference names no value: "1000 more pieces" of a 500-piece puzzle wants
    # 1500 (the 1000-piece one was offered alone, train tasks 98, 99 and 107).
    said = [_NO_WORD if w.isdigit() and i + 1 < len(said) and said[i + 1] in _RELATIVE else w
            for i, w in enumerate(said)]
    return f" {' '.join(said)} "


def says(feature: str, words: str) -> bool:
    """Whether ``words`` (``said_words``) has ``feature``: one of its forms whole, or its words in order with at most
    one word between each ("not water resistant" has "not resistant"); not where it follows "rather than" or the
    like ("art rather than animals" does not ask for animals)."""
    said = words.split()
    for form in forms(feature):
        size = len(form.split())
        if any(said[i:i + size] == form.split() and wanted_at(said, i) for i in range(len(said))):
            return True
    parts = plain(feature).split()
    if len(parts) < 2:
        return False
    starts = [i for i, w in enumerate(said) if w == parts[0] and wanted_at(said, i)]
    return any(_in_order(said, i, parts[1:]) for i in starts)


def wanted_at(said: list[str], at: int) -> bool:
    """Whether the words before ``said[at]`` (an article aside: "instead of a road bike") do not make it the one not
    wanted."""
    before = said[max(at - 3, 0):at]
    if before and before[-1] in _ARTICLES:
        before = before[:-1]
    return " ".join(before[-2:]) not in _NOT_WANTED


def said_unwanted(feature: str, words: str) -> bool:
    """Whether ``words`` (``said_words``) say ``feature`` as the one not wanted ("instead of Apple HomeKit")."""
    said = words.split()
    return any(said[i:i + len(form.split())] == form.split() and not wanted_at(said, i)
               for form in forms(feature) for i in range(len(said)))


def _in_order(said: list[str], at: int, rest: list[str]) -> bool:
    if not rest:
        return True
    # The word between may not be a number: "1.5 liters" is not "1 liter".
    reach = at + 2 if at + 1 < len(said) and said[at + 1].isdigit() else at + 3
    return any(said[j] == rest[0] and _in_order(said, j, rest[1:]) for j in range(at + 1, min(reach, len(said))))


def mentioned_features(description: str, texts: Iterable[str]) -> set[str]:
    """The features of ``description`` that ``texts`` mention as whole words."""
    return {f for _, f in mentioned_at(description, said_words(texts))}


def mentioned_at(description: str, words: str) -> set[tuple[int, str]]:
    """(place, feature) of each feature of ``description`` that ``words`` (``said_words``) mention."""
    return {(i, f) for i, f in enumerate(features(description)) if says(f, words)}


def not_features(typed: Iterable[str], lines: Iterable[str]) -> list[str]:
    """The ``typed`` tokens that are no word of a feature of ``lines``: "the 8GB, 1TB SSD one" typed "8GB" and
    "1TB", which look like ids (a digit in them) but name options, and the 1.5B wrote "1TB" as the new item id; so did
    "13-inch" (a feature of two words as ``plain`` writes it), written as both laptops' new item (train task 35)."""
    said = {form for line in lines for f in features(line) for form in (*forms(f), *plain(f).split())}
    return [t for t in typed if plain(t) not in said]


def descriptions(records: Iterable[dict], keyed: bool = True) -> dict[str, str]:
    """``{value: its text}`` for every value the ``records`` (each mapping of the look-up data, ``walk.records``)
    list: a mapping's key whose entry is a text (a product's variant line, keyed by item id; not with ``keyed``
    False), and each scalar of a record, described by the record's texts joined (an order's line: its name and
    options)."""
    out: dict[str, str] = {}
    for node in records:
        texts = "; ".join(str(v) for v in node.values() if isinstance(v, str))
        for key, value in node.items():
            if keyed and isinstance(value, str):  # a line keyed by its id (a field name keyed so is never asked for)
                out[str(key)] = value
            if isinstance(value, (int, float, str)) and not isinstance(value, bool):
                out.setdefault(str(value), texts)
    return out


def about(texts: Iterable[str], name: str, names: set[str], mentions: Callable[[str, str], bool]) -> list[str]:
    """The sentences of ``texts`` that mention ``name`` or none of the other ``names``: "the helmet for a red one;
    the luggage set for a black one" describes the helmet by its first sentence only."""
    sentences = [s for text in texts for s in _SENTENCE.split(text) if s.strip()]
    return [s for s in sentences if mentions(s, name) or not any(mentions(s, n) for n in names if n != name)]


def by_name(values: Iterable[str], names: dict[str, Any]) -> dict[str, list[str]]:
    """``values`` grouped by their name (``names``: a variant's product), first seen first."""
    groups: dict[str, list[str]] = {}
    for v in values:
        groups.setdefault(str(names.get(v)), []).append(v)
    return groups


# "the 17-inch laptop", "my black smart watch": a feature said between an article and the product's name describes the
# line the customer holds; after "to", "for", "into", "with" or "as" it is what they want ("for the 13-inch one").
_HELD_BY = (r"(?<!\bto)(?<!\bfor)(?<!\binto)(?<!\bwith)(?<!\bas) (?:"
            + "|".join(plain(w) for w in ("the", "my", "this", "that", "your", "our")) + r") (?:\S+ ){0,2}?")


def held_before(name: str, own: Mapping[K, set[str]], texts: Iterable[str]) -> list[K]:
    """The one of the lines ``own`` (each line of the product ``name``: its features) whose feature, one not every line
    has, the customer's ``texts`` say right before the product's name (``_HELD_BY``: "change the 17-inch laptop to the
    13-inch version" holds the 17-inch one), or [] where none or several are."""
    said, head = said_words(texts), plain(name).split()[-1:]
    if len(own) < 2 or not head:
        return []
    common = set.intersection(*own.values())

    def before_name(feature: str) -> bool:
        return any(re.search(f"{_HELD_BY}{re.escape(form)} (?:\\S+ ){{0,2}}?{re.escape(head[0])} ", said)
                   for form in forms(feature))
    picked = [line for line, fs in own.items() if any(before_name(f) for f in fs - common)]
    return picked if len(picked) == 1 else []
