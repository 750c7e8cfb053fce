"""Which listed value the customer described: the features they typed pick a product's variant.

A look-up lists a product's variants as short lines ("purple, S, polyester, v-neck; $53.48; available"), and a
1.5B model asked for "purple, size S, v-neck, polyester" copied the id of another line of the list (a blue
crew-neck M). So an argument the pack marks ``CHOICES_DESCRIBED`` keeps, among its values of each name (each
product), only those whose listed features the customer's words mention most (``narrowed``), and never a value
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
from collections.abc import Callable, Iterable
from typing import Any

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


def _plain(text: str) -> str:
    """Lower-case words split at anything else, a unit after a number in one spelling (``_UNITS``), a plural's "s"
    cut ("2 pieces", "2 piece")."""
    text = _NON_WORD.sub(" ", text.lower())
    for unit, spelling in _UNITS:
        text = unit.sub(spelling, text)
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in text.split())


def plain_words(text: str) -> set[str]:
    """The words of ``text`` as ``_plain`` writes them (lower case, a plural's "s" cut)."""
    return set(_plain(text).split())


# A size's letters as a customer says them: "a medium one" is size M (train task 23); "extra large" is read as "xl"
# first (``_words``), so its "large" is no L.
_SIZES = {"s": ("small",), "m": ("medium",), "l": ("large",)}
_SIZE_WORDS = ((re.compile(r"\b(?:extra extra|double extra) large\b"), "xxl"),
               (re.compile(r"\bextra large\b"), "xl"), (re.compile(r"\bextra small\b"), "xs"))


def _forms(feature: str) -> set[str]:
    """A feature as the customer may type it: words as they are, run together, a number apart from its unit, or a
    size's letters in words."""
    base = _plain(feature)
    return {f for f in (base, base.replace(" ", ""), _plain(re.sub(r"(\d)([a-z])", r"\1 \2", base)),
                        *_SIZES.get(base, ())) if f}


def _words(texts: Iterable[str]) -> str:
    plain = _plain(" ".join(texts).replace(chr(39), "").replace(chr(0x2019), ""))
    for words, letters in _SIZE_WORDS:
        plain = words.sub(letters, plain)
    said = plain.split()
    # A number followed by a word of difference names no value: "1000 more pieces" of a 500-piece puzzle wants
    # 1500 (the 1000-piece one was offered alone, train tasks 98, 99 and 107).
    said = [_NO_WORD if w.isdigit() and i + 1 < len(said) and said[i + 1] in _RELATIVE else w
            for i, w in enumerate(said)]
    return f" {' '.join(said)} "


def _said(feature: str, words: str) -> bool:
    """Whether ``words`` (``_words``) has ``feature``: one of its forms whole, or its words in order with at most
    one word between each ("not water resistant" has "not resistant"); not where it follows "rather than" or the
    like ("art rather than animals" does not ask for animals)."""
    said = words.split()
    for form in _forms(feature):
        size = len(form.split())
        if any(said[i:i + size] == form.split() and _wanted(said, i) for i in range(len(said))):
            return True
    parts = _plain(feature).split()
    if len(parts) < 2:
        return False
    starts = [i for i, w in enumerate(said) if w == parts[0] and _wanted(said, i)]
    return any(_in_order(said, i, parts[1:]) for i in starts)


def _wanted(said: list[str], at: int) -> bool:
    """Whether the words before ``said[at]`` (an article aside: "instead of a road bike") do not make it the one not
    wanted."""
    before = said[max(at - 3, 0):at]
    if before and before[-1] in _ARTICLES:
        before = before[:-1]
    return " ".join(before[-2:]) not in _NOT_WANTED


def _refused(feature: str, words: str) -> bool:
    """Whether ``words`` (``_words``) say ``feature`` as the one not wanted ("instead of Apple HomeKit")."""
    said = words.split()
    return any(said[i:i + len(form.split())] == form.split() and not _wanted(said, i)
               for form in _forms(feature) for i in range(len(said)))


def _in_order(said: list[str], at: int, rest: list[str]) -> bool:
    if not rest:
        return True
    # The word between may not be a number: "1.5 liters" is not "1 liter".
    reach = at + 2 if at + 1 < len(said) and said[at + 1].isdigit() else at + 3
    return any(said[j] == rest[0] and _in_order(said, j, rest[1:]) for j in range(at + 1, min(reach, len(said))))


def mentioned_features(description: str, texts: Iterable[str]) -> set[str]:
    """The features of ``description`` that ``texts`` mention as whole words."""
    return {f for _, f in _mentioned(description, _words(texts))}


def _mentioned(description: str, words: str) -> set[tuple[int, str]]:
    """(place, feature) of each feature of ``description`` that ``words`` (``_words``) mention."""
    return {(i, f) for i, f in enumerate(features(description)) if _said(f, words)}


def not_features(typed: Iterable[str], lines: Iterable[str]) -> list[str]:
    """The ``typed`` tokens that are no word of a feature of ``lines``: "the 8GB, 1TB SSD one" typed "8GB" and
    "1TB", which look like ids (a digit in them) but name options, and the 1.5B wrote "1TB" as the new item id."""
    words = {w for line in lines for f in features(line) for w in _plain(f).split()}
    return [t for t in typed if _plain(t) not in words]


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


def _asked_for(group: list[str], said: str, described: dict[str, str], old: set[str],
               labels: list[str] | None = None) -> dict[str, set[tuple[int, str]]]:
    """``{value: (place, feature) of each of its features ``said`` (``_words``) mentions}``, counting only features the
    ``old`` lines lack ("Google Home instead of Apple HomeKit" names the old line's feature too), and not in a place
    whose feature the customer says beside another place's name (``_placed_elsewhere``; ``labels``: the places' names
    in order)."""
    wanted = {v: {(i, f) for i, f in _mentioned(described.get(v, ""), said)
                  if f not in old and not _placed_elsewhere(i, f, said, labels or [])} for v in group}
    return _one_place_each(wanted, said)


def _placed_elsewhere(at: int, feature: str, said: str, labels: list[str]) -> bool:
    """Whether a word after ``feature`` where ``said`` says it names another place (a word of its label that place
    ``at``'s lacks), and none names place ``at``: "brown lenses; if brown isn't there, blue" asks for the lens colour's
    brown, not for the frame colour's (the 1.5B chose brown lenses in a brown frame for "the same pair with brown
    lenses"; our own conversations). Only the word after: the words are read without their commas, and in "an i7 processor, 8GB" the
    processor's name stands before the memory's 8GB (train task 93)."""
    if at >= len(labels):
        return False
    own = set(_plain(labels[at]).split())
    others = {w for i, label in enumerate(labels) if i != at for w in _plain(label).split()} - own
    words = said.split()

    def names(word: str, of: set[str]) -> bool:  # "lense" (of "lenses") names "len" (of "lens"): plurals cut apart
        return any(word == w or (len(w) >= 3 and word.startswith(w)) for w in of)
    after = [words[k + len(form.split())] if k + len(form.split()) < len(words) else ""
             for form in _forms(feature) for k in range(len(words)) if words[k:k + len(form.split())] == form.split()]
    return any(names(w, others) for w in after) and not any(names(w, own) for w in after)


def _one_place_each(wanted: dict[str, set[tuple[int, str]]], said: str) -> dict[str, set[tuple[int, str]]]:
    """``wanted`` (``_asked_for``) without a feature said in a place where others are said too, where the only words
    that say the one feature said in another place say it too: "a medium one, red, with high ventilation" asks for
    size M ("medium") and high ventilation, not for a medium or a high one (alternatives); "size M, … medium
    first, else heavy" says M on its own, so the medium stays an alternative."""
    places = _places(wanted)
    lone = [(j, {form for form in _forms(next(iter(fs))) if f" {form} " in said})
            for j, fs in places.items() if len(fs) == 1]
    shared = {(i, f) for i, fs in places.items() if len(fs) > 1 for f in fs
              if any(j != i and forms and forms <= _forms(f) for j, forms in lone)}
    if not shared or any(not places[i] - {f for k, f in shared if k == i} for i, _ in shared):
        return wanted
    return {v: w - shared for v, w in wanted.items()}


def _places(wanted: dict[str, set[tuple[int, str]]]) -> dict[int, set[str]]:
    """``{place: the features mentioned there}`` of ``_asked_for``: two or more in one place are alternatives."""
    places: dict[int, set[str]] = {}
    for i, f in set().union(*wanted.values()):
        places.setdefault(i, set()).add(f)
    return places


def _scores(wanted: dict[str, set[tuple[int, str]]]) -> dict[str, int]:
    """``{value: how many of the features asked for (``wanted``: ``_asked_for``) it has}``, counting only those that
    have no alternative mentioned in the same place ("battery first, then USB": the customer is ranking them)."""
    places = _places(wanted)
    return {v: sum(1 for i, _ in w if len(places[i]) == 1) for v, w in wanted.items()}


def _partly(group: list[str], said: str, described: dict[str, str], old: set[str]) -> dict[str, int]:
    """``{value: how many of its features of two or more words ``said`` has a word of}``, a word of four letters or
    more that no feature of the ``old`` lines has and not said as the one not wanted."""
    words = said.split()
    spoken = {w for i, w in enumerate(words) if len(w) >= 4 and w.isalpha() and _wanted(words, i)}
    spoken -= {w for f in old for w in _plain(f).split()}
    return {v: sum(1 for f in features(described.get(v, "")) if len(_plain(f).split()) > 1
                   and spoken & set(_plain(f).split())) for v in group}


def narrowed(values: list[str], texts: Iterable[str], *, names: dict[str, Any], described: dict[str, str],
             old: dict[str, set[str]], excluded: str | None, known: set[str],
             mentions: Callable[[str, str], bool], labels: dict[str, list[str]] | None = None) -> list[str]:
    """``values`` kept, per name (``names``: a variant's product), where the customer's ``texts`` (``about`` that
    name among the ``known`` names) mention the most features of their description (``described``) that the
    name's old lines (``old``: name -> features) lack; a value whose description holds ``excluded`` only when its
    name has nothing else. A feature that has alternatives mentioned in the same place ("battery first, then USB,
    then AC adapter") counts for none: the customer is ranking them, and which one is available decides. ``labels``:
    per name, its places' names (``_placed_elsewhere``). Order kept."""
    texts = list(texts)
    keep: set[str] = set()
    for name, group in by_name(values, names).items():
        usable = [v for v in group if not (excluded and excluded in described.get(v, ""))] or group
        said = _words(about(texts, name, known, mentions))
        # Not one with a feature said as the one not wanted ("Google Home instead of Apple HomeKit"), where any is left.
        usable = [v for v in usable if not any(_refused(f, said) for f in features(described.get(v, "")))] or usable
        wanted = _asked_for(usable, said, described, old.get(name, set()), (labels or {}).get(name))
        # No feature said whole (nor ranked): one word of one ("Google Home": "Google Assistant").
        scores = _scores(wanted) if any(wanted.values()) else _partly(usable, said, described, old.get(name, set()))
        best = max(scores.values())
        keep.update(v for v in usable if scores[v] == best)
    return [v for v in values if v in keep]


def closest(values: list[str], texts: Iterable[str], *, names: dict[str, Any], described: dict[str, str],
            old: dict[str, set[str]], known: set[str], mentions: Callable[[str, str], bool],
            every: Iterable[str] = (), spoken: dict[str, set[int]] | None = None,
            labels: dict[str, list[str]] | None = None) -> list[str]:
    """``values`` kept, per name, where the customer's ``texts`` (``about`` that name) mention features some of them
    have and the old lines (``old``) lack, one value in each place: the ones that keep the most of the old lines'
    features in the places they did not speak of. What they asked to change changes, the rest stays: for "the same
    keyboard but with clicky switches" the 1.5B chose the clicky one without the old one's backlight (train task 1).
    Alternatives ranked in one place ("green, or navy if there is none") leave the choice open, as in ``narrowed``:
    the ones closest to the old line are kept of each (the green and the navy one), for ``preferred`` to choose
    ("brown lenses; if not, blue": of the brown ones, the one in the old black frame; our own conversations).
    Applied last, after the comparisons ("one size smaller"), so it only chooses among what they left; the places
    spoken of are read from ``every`` value before any narrowing (and ``values``), and ``spoken`` adds, per name,
    the places the customer compared ("a shorter one, still bamboo": the shorter ones in bamboo, as plain as the old
    one, train task 29). Order kept."""
    texts = list(texts)
    drop: set[str] = set()
    listed = by_name(list(dict.fromkeys([*every, *values])), names)
    for name, group in by_name(values, names).items():
        places = _places(_asked_for(listed[name], _words(about(texts, name, known, mentions)), described,
                                 old.get(name, set()), (labels or {}).get(name)))
        compared_at = (spoken or {}).get(name, set())
        if not (places or compared_at):
            continue
        lines = {v: features(described.get(v, "")) for v in group}
        kept = {v: sum(1 for i, f in enumerate(lines[v]) if i not in places and i not in compared_at
                       and f in old.get(name, set())) for v in group}
        ranked = sorted(i for i, fs in places.items() if len(fs) > 1)  # each alternative's own closest
        alike = {v: tuple(lines[v][i] if i < len(lines[v]) else None for i in ranked) for v in group}
        drop |= {v for v in group if kept[v] < max(kept[u] for u in group if alike[u] == alike[v])}
    return [v for v in values if v not in drop]


def preferred(values: list[str], texts: Iterable[str], *, names: dict[str, Any], described: dict[str, str],
              known: set[str], mentions: Callable[[str, str], bool], every: Iterable[str] = (),
              labels: dict[str, list[str]] | None = None, old: dict[str, set[str]] | None = None) -> list[str]:
    """``values`` kept, per name, where the customer ranks alternatives in one place ("an AC adapter first, then
    battery, then USB", "green, or navy if there is none"; read from ``every`` value before any narrowing): those
    with the alternative said first that any of them has. Applied after everything else narrowed, so a ranking only
    chooses among what the customer's other words kept: of the less bright desk lamps, the 1.5B chose a battery one
    where an AC adapter one was there (train task 7). The old line's feature (``old``) said in a sentence before any
    other is what the customer has, not their first choice: "My sunglasses have green lenses. I'd like brown lenses,
    or blue" (our own conversations), where "silver or black" of a silver laptop ranks silver first (train task 35).
    Order kept."""
    texts = list(texts)
    drop: set[str] = set()
    listed = by_name(list(dict.fromkeys([*every, *values])), names)
    for name, group in by_name(values, names).items():
        sentences = [_words([s]) for s in about(texts, name, known, mentions)]
        said = _words(about(texts, name, known, mentions))
        # The old line's value counts here: ranked second, USB (the lamp's own) comes before an AC adapter (task 8).
        placed = (labels or {}).get(name)
        kept = _asked_for(group, said, described, set(), placed)
        for place, alternatives in _places(_asked_for(listed[name], said, described, set(), placed)).items():
            ranked = sorted(alternatives, key=lambda f: _first_said(f, said))
            first = [next((i for i, w in enumerate(sentences) if _said(f, w)), len(sentences)) for f in ranked]
            if ranked[0] in (old or {}).get(name, set()) and first[0] < min(first[1:], default=first[0]):
                ranked = ranked[1:]  # what they have, said before what they want
            present = [f for f in ranked if any((place, f) in kept[v] for v in group)]
            if len(alternatives) > 1 and present:
                drop |= {v for v in group if (place, present[0]) not in kept[v]}
    return [v for v in values if v not in drop] or values


def _first_said(feature: str, said: str) -> int:
    """Where in ``said`` (``_words``) ``feature`` is first said (its length where it is not)."""
    return min((at for form in _forms(feature) if (at := said.find(f" {form} ")) >= 0), default=len(said))
