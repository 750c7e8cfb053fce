"""Which of a product's variants the customer asked for: ``narrowed`` keeps those whose listed features their words
mention most, ``closest`` the ones nearest the line replaced where they did not speak, ``preferred`` the alternative
they ranked first (``chops.pipeline.choices`` applies them in that order, around the comparisons of
``chops.pipeline.relative``). Features are matched as ``chops.pipeline.described`` reads them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from chops.pipeline.described import (about, by_name, features, forms, mentioned_at, plain, said_unwanted,
                                      said_words, says, wanted_at)


def _asked_for(group: list[str], said: str, described: dict[str, str], old: set[str],
               labels: list[str] | None = None) -> dict[str, set[tuple[int, str]]]:
    """``{value: (place, feature) of each of its features ``said`` (``said_words``) mentions}``, counting only features
    the ``old`` lines lack ("Google Home instead of Apple HomeKit" names the old line's feature too), and not in a
    place whose feature the customer says beside another place's name (``_placed_elsewhere``; ``labels``: the places'
    names in order)."""
    at: dict[int, set[str]] = {}  # each place's features, as the customer may type them
    for v in group:
        for i, f in enumerate(features(described.get(v, ""))):
            at.setdefault(i, set()).update(forms(f))
    spoken = {v: {(i, f) for i, f in mentioned_at(described.get(v, ""), said)
                  if not _placed_elsewhere(i, f, said, labels or [], at)} for v in group}
    wanted = {v: {(i, f) for i, f in found if f not in old} for v, found in spoken.items()}
    return _one_place_each(wanted, said, spoken)


def _placed_elsewhere(at: int, feature: str, said: str, labels: list[str], typed: dict[int, set[str]]) -> bool:
    """Whether a word after ``feature`` where ``said`` says it names another place (a word of its label that place
    ``at``'s lacks), and none names place ``at``: "brown lenses; if brown isn't there, blue" asks for the lens colour's
    brown, not for the frame colour's (the 1.5B chose brown lenses in a brown frame for "the same pair with brown
    lenses"; our own conversations). Only the word after: the words are read without their commas, and in "an i7
    processor, 8GB" the processor's name stands before the memory's 8GB (train task 93). Nor a place's name followed
    by one of that place's own features (``typed``: place -> its features' forms): "purple, size S, v-neck" names
    the size of the S, not of the purple (train task 4: no purple counted, and black t-shirts were offered)."""
    if at >= len(labels):
        return False
    own = set(plain(labels[at]).split())
    words = said.split()

    def names(word: str, of: set[str]) -> bool:  # "lense" (of "lenses") names "len" (of "lens"): plurals cut apart
        return any(word == w or (len(w) >= 3 and word.startswith(w)) for w in of)

    def elsewhere(k: int) -> bool:  # words[k] names another place, and no feature of that place follows it
        return any(i != at and names(words[k], set(plain(label).split()) - own)
                   and not any(words[k + 1:k + 1 + len(f.split())] == f.split() for f in typed.get(i, ()))
                   for i, label in enumerate(labels))
    after = [k + len(form.split()) for form in forms(feature) for k in range(len(words) - len(form.split()))
             if words[k:k + len(form.split())] == form.split()]
    return any(elsewhere(k) for k in after) and not any(names(words[k], own) for k in after)


def _one_place_each(wanted: dict[str, set[tuple[int, str]]], said: str,
                    spoken: dict[str, set[tuple[int, str]]]) -> dict[str, set[tuple[int, str]]]:
    """``wanted`` (``_asked_for``) without a feature said in a place where others are said too, where the only words
    that say the one feature said in another place (of every feature ``spoken``, the old line's too) say it too: "a
    medium one, red, with high ventilation" asks for size M ("medium") and high ventilation, not for a medium or a
    high one (alternatives), and so does "the medium blue one with high ventilation" of a blue M helmet with low
    ventilation (own5: the 1.5B chose a white one); "size M, … medium first, else heavy" says M on its own, so the
    medium stays an alternative."""
    places = _places(wanted)
    lone = [(j, {form for form in forms(next(iter(fs))) if f" {form} " in said})
            for j, fs in _places(spoken).items() if len(fs) == 1]
    shared = {(i, f) for i, fs in places.items() if len(fs) > 1 for f in fs
              if any(j != i and spelt and spelt <= forms(f) for j, spelt in lone)}
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
    spoken = {w for i, w in enumerate(words) if len(w) >= 4 and w.isalpha() and wanted_at(words, i)}
    spoken -= {w for f in old for w in plain(f).split()}
    return {v: sum(1 for f in features(described.get(v, "")) if len(plain(f).split()) > 1
                   and spoken & set(plain(f).split())) for v in group}


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
        said = said_words(about(texts, name, known, mentions))
        # Not one with a feature said as the one not wanted ("Google Home instead of Apple HomeKit"), where any is left.
        usable = [v for v in usable
                  if not any(said_unwanted(f, said) for f in features(described.get(v, "")))] or usable
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
        places = _places(_asked_for(listed[name], said_words(about(texts, name, known, mentions)), described,
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


def kept_as_said(values: list[str], texts: Iterable[str], *, names: dict[str, Any], described: dict[str, str],
                 old: dict[str, set[str]], known: set[str], mentions: Callable[[str, str], bool]) -> list[str]:
    """``values`` kept, per name, that have each feature of the old lines (``old``) the customer's ``texts`` mention in
    a place where they mention no other feature: "a shorter one, still bamboo" keeps the bamboo ones, "the blue one,
    size S, for a red one" keeps no blue one (red is said in that place too). None left: all of them. ``closest``
    keeps the old line's features everywhere it can; this, only where the customer said so (the options listed to
    choose from: ``chops.pipeline.listing``). Order kept."""
    texts = list(texts)
    drop: set[str] = set()
    for name, group in by_name(values, names).items():
        said = said_words(about(texts, name, known, mentions))
        spoken = {v: mentioned_at(described.get(v, ""), said) for v in group}
        changed = {i for found in spoken.values() for i, f in found if f not in old.get(name, set())}
        kept = {(i, f) for found in spoken.values() for i, f in found if f in old.get(name, set()) and i not in changed}
        drop |= {v for v in group if not kept <= spoken[v]} if any(kept <= spoken[v] for v in group) else set()
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
        told = about(texts, name, known, mentions)
        sentences, said = [said_words([s]) for s in told], said_words(told)
        # The old line's value counts here: ranked second, USB (the lamp's own) comes before an AC adapter (task 8).
        placed = (labels or {}).get(name)
        kept = _asked_for(group, said, described, set(), placed)
        for place, alternatives in _places(_asked_for(listed[name], said, described, set(), placed)).items():
            ranked = sorted(alternatives, key=lambda f: _first_said(f, said))
            first = [next((i for i, w in enumerate(sentences) if says(f, w)), len(sentences)) for f in ranked]
            if ranked[0] in (old or {}).get(name, set()) and first[0] < min(first[1:], default=first[0]):
                ranked = ranked[1:]  # what they have, said before what they want
            present = [f for f in ranked if any((place, f) in kept[v] for v in group)]
            if len(alternatives) > 1 and present:
                drop |= {v for v in group if (place, present[0]) not in kept[v]}
    return [v for v in values if v not in drop] or values


def _first_said(feature: str, said: str) -> int:
    """Where in ``said`` (``said_words``) ``feature`` is first said (its length where it is not)."""
    return min((at for form in forms(feature) if (at := said.find(f" {form} ")) >= 0), default=len(said))
