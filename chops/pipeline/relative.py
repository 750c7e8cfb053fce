"""Variants described relative to the line they replace: "a bigger one", "less bright", "a slightly lower
resolution", "a larger frame", "500 fewer pieces".

Asked for a desk lamp "less bright" than its medium one, the 1.5B chose the high one, and the verifier passed it:
the described narrowing (``chops.pipeline.described``) matches the values a customer names, and these name none.
So a word of comparison ("less", "lower", "bigger", "brighter") with the option it is about, by the option's name
as the old line labels it ("brightness: medium", "frame size: medium"), keeps the variants whose value there is
above or below the old line's. "Bigger", "larger" and "smaller" with no option named are about the size or the
capacity, "shorter" and "longer" about the length, "easier" and "harder" about the difficulty. Values are ordered
by their number ("750ml", "20MP", "1500") or on a known scale ("low, medium, high", "S, M, L"); where the old
value or a variant's has no place in an order, nothing is narrowed, nor is it where no variant is on the wanted side.
"The same size" keeps the old line's value, "the same material and color" both (where no variant keeps them, the
swap is refused: ``chops.pipeline.swapped``); "the same type as the one I got" is not compared with the line replaced:
the new item is the customer's other line's (``like_another``). "The cheapest", "the most expensive", "the
maximum zoom" keep the least or the most of what the rest kept (a price is the variant's "$…" feature). Asked for
"the cheapest desk lamp available", the 1.5B chose a dearer one (train task 44); for "the maximum zoom", a 5x camera
where a 10x was listed (task 52). Whole words only, and only a word followed by (or itself naming) an option: "I'd
like more help" compares nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.described import about, by_name, features
from chops.pipeline.states import in_said_state
from chops.pipeline.walk import lines_in, mentions, record_fields, values_in

_UP = {"bigger", "larger", "higher", "more", "brighter", "longer", "greater", "taller", "wider", "heavier",
       "louder", "stronger", "faster"}
_DOWN = {"smaller", "lower", "less", "fewer", "dimmer", "shorter", "narrower", "lighter", "quieter", "weaker",
         "slower"}
_SIZED = {"bigger", "larger", "smaller", "biggest", "largest", "smallest"}  # no option named: size or capacity
_LENGTHED = {"shorter", "longer", "shortest", "longest"}  # no option named: the length
_MOST = {"most", "maximum", "max", "highest", "largest", "biggest", "greatest", "longest"}
_LEAST = {"least", "minimum", "min", "lowest", "smallest", "shortest", "fewest"}
# No option named: the difficulty ("the easiest one with the fewest pieces": train task 41, the 1.5B chose an expert
# one).
_EASED = {"easier": -1, "simpler": -1, "easiest": -2, "simplest": -2, "harder": 1, "hardest": 2}
# How each word compares: +1 above the old line, -1 below, 0 the same, +2 the most, -2 the least.
_HOW = {**{w: 1 for w in _UP}, **{w: -1 for w in _DOWN}, "same": 0, **{w: 2 for w in _MOST},
        **{w: -2 for w in _LEAST}, **_EASED, "keep": 0, "keeping": 0}
_ARTICLES = {"the", "its", "their", "my"}
_PRICED = {"cheaper": -1, "pricier": 1, "cheapest": -2, "priciest": 2}  # words about the price alone
COMPARING = frozenset({*_HOW, *_PRICED})  # every word that compares with the line replaced
PRICE = "price"  # the pseudo-option a variant's "$…" feature is the value of
_SIZES = ("size", "capacity")
SCALES = (("low", "medium", "high"), ("small", "medium", "large"), ("xs", "s", "m", "l", "xl", "xxl"),
          ("beginner", "intermediate", "advanced", "expert"))
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_LABELLED = re.compile(r"^\s*([^:,;]+):\s*(.+?)\s*$")
_WORDS = re.compile(r"[a-z]+")


# A line to be made like another the customer holds, not compared with the one it replaces: "change the grill I just
# ordered to the same type as the one I already received", "like the ones I have", "like the one in my pending order".
LIKE_ANOTHER = re.compile(r"\b(?:same|like|match(?:es|ing)?|identical to)\b[^.;!?]*?\b(?:one|ones|kind|model)\s+"
                          r"(?:(?:that\s+)?(?:i|i've|i'd|we|you)|(?:in|from)\s+(?:my|our|the))\b", re.IGNORECASE)


def like_another(op: Operation, args: dict[str, Any], texts: Iterable[str],
                 sources: list[Any]) -> dict[str, Any] | None:
    """``args`` with a swapped line proposed for itself given the item of the customer's one other line of that product
    (in another record), where the ``texts`` about the product ask for one like it (``LIKE_ANOTHER``) and the line was
    proposed for itself or they name the other record's state there; None when nothing changes. Asked to change a grill
    "to the same type as the one I already received", the 1.5B proposed the pending grill for itself (train task 23):
    the comparisons compare with the line replaced. Applied to the plan's writes (``which.read_elsewhere``), after each
    call is switched to the operation its record's state takes."""
    texts, names = list(texts), op.choice_names()
    out = dict(args)
    for lines_arg, pair in op.choice_pairs().items():
        lines, new, record = args.get(lines_arg), args.get(pair["partner"]), args.get(pair["in"])
        if not isinstance(lines, list) or not isinstance(new, list) or lines_arg not in names:
            continue
        name_of = record_fields(sources, {names[lines_arg]})[names[lines_arg]]
        known = {str(n) for n in name_of.values() if isinstance(n, str)}
        others = [r for r in values_in(sources, op.choice_keys().get(pair["in"], ())) if r != record]
        for i, line in enumerate(lines[:len(new)]):
            name = str(name_of.get(str(line)))
            liked = [t[m.start():] for t in about(texts, name, known, mentions) if (m := LIKE_ANOTHER.search(t))]
            held = {(r, v) for r in others for v in lines_in(sources, r, op.choice_keys()[lines_arg])
                    if str(name_of.get(v)) == name}
            items = {v for _, v in held}  # one item to copy, however many records hold it
            if not liked or len(items) != 1 or items == {line}:
                continue
            # A line proposed for itself; or a new item of the model's own choosing where the words after "like"
            # name the state of the record to copy and not that of the one changed ("… the same type as the one in my
            # pending order": the 1.5B chose a latex hose, train task 29). Otherwise the model's item stands: the
            # record it changes may be the one to copy.
            said = in_said_state(set(op.choice_keys().get(pair["in"], ())), [op], sources, " ".join(liked))
            if new[i] == line or ({r for r, _ in held} <= said and record not in said):
                out[pair["partner"]] = [*out[pair["partner"]][:i], *items, *out[pair["partner"]][i + 1:]]
    return out if out != args else None


def labels(texts: Iterable[str]) -> dict[str, str]:
    """``{option: value}`` of a line's labelled parts ("brightness: medium, color: white"), in their order."""
    out: dict[str, str] = {}
    for text in texts:
        for part in re.split(r"[,;]", text):
            m = _LABELLED.match(part)
            if m:
                out.setdefault(m.group(1).strip().lower(), m.group(2))
    return out


def comparisons(text: str, options: Iterable[str]) -> list[tuple[str, int]]:
    """(option, how) for each comparison ``text`` makes about one of ``options`` or the price (``PRICE``): how is
    +1 for above the old line's value, -1 for below, 0 for the same ("the same size"), +2 for the most ("the
    maximum zoom", "the most expensive"), -2 for the least ("the cheapest"). The same and the comparisons first,
    then the most and the least: they pick among what the others kept."""
    options = list(options)
    words = _WORDS.findall(text.lower())
    # "keep the capacity and type" is "the same capacity and type", "lower the pressure" "lower pressure": the
    # article after a word of comparison is dropped.
    words = [w for i, w in enumerate(words) if not (i and words[i - 1] in _HOW and w in _ARTICLES)]
    out: list[tuple[str, int]] = []
    for i, word in enumerate(words):
        after = words[i + 1] if i + 1 < len(words) else ""
        how = _HOW.get(word)
        if word == "longer" and i and words[i - 1] in ("no", "any"):
            continue  # of time: "I no longer need it" had a cancel's order swapped for a longer item (own8)
        if word in _PRICED:
            found: tuple[str, int] | None = (PRICE, _PRICED[word])
        elif how is None or how == 0 and words[i + 2:i + 3] == ["as"]:
            continue  # "the same type as the one I received" compares with another line, not the one replaced
        elif after == "expensive" and how != 0:
            found = (PRICE, how)  # "less expensive", "more expensive", "most expensive", "least expensive"
        else:
            found = None
            # "less bright", "lower resolution", "same size", "maximum zoom": the next word; "brighter": the word
            # itself, its "er" cut.
            stems = [word[:-2], word[:-3]] if abs(how) == 1 else []
            # and the word before: "500 pieces less", "one size bigger"
            before = [words[i - 1]] if abs(how) == 1 and i else []
            option = next((o for w in (after, *stems, *before) if (o := _option(w, options)) is not None), None)
            implied = _SIZES if word in _SIZED else ("length",) if word in _LENGTHED else \
                ("difficulty",) if word in _EASED else ()
            if option is None and implied:
                option = next((o for o in options if any(s in o.split() for s in implied)), None)
            if option is not None:
                found = (option, how)
        if found is not None and found not in out:
            out.append(found)
        if how == 0 and found is not None:  # "the same material and color": each option chained after it too
            out.extend(c for c in _chained(words[i + 2:], options) if c not in out)
    return sorted(out, key=lambda c: abs(c[1]) == 2)


_MORE = r"(?:more|fewer|less|bigger|larger|smaller|higher|lower|longer|shorter)"
_AMOUNT = re.compile(rf"\b(\d+(?:\.\d+)?)\s+(?:{_MORE}\s+([a-z]+)|([a-z]+)\s+{_MORE}\b)", re.IGNORECASE)


def amounts(text: str, options: Iterable[str]) -> dict[str, float]:
    """``{option: by how much}`` for each comparison ``text`` makes by a number ("1000 more pieces", "500 pieces
    less"): asked for "1000 more pieces" than a 500-piece puzzle, the 1.5B chose a 2000-piece one, all three larger
    ones being on the side asked for (train task 98; 107: "500 fewer pieces")."""
    options = list(options)
    return {option: float(m.group(1)) for m in _AMOUNT.finditer(text)
            if (option := _option((m.group(2) or m.group(3)).lower(), options)) is not None}


def _chained(words: list[str], options: list[str]) -> Iterator[tuple[str, int]]:
    """(option, 0) for each option named after an "and" or "or" that follows "the same <option>"."""
    while len(words) >= 2 and words[0] in ("and", "or"):
        option = _option(words[1], options)
        if option is None:
            return
        yield option, 0
        words = words[2:]


def _option(word: str, options: list[str]) -> str | None:
    """The first of ``options`` ``word`` (4 letters or more) names: a word of it starts with ``word`` or begins it."""
    if len(word) < 4:
        return None
    return next((o for o in options if any(part.startswith(word) or word.startswith(part)
                                           for part in o.split() if len(part) >= 4)), None)


def rank(value: str, others: Iterable[str]) -> float | None:
    """Where ``value`` stands among ``others`` (all of one option): its number, else its place on a scale that
    holds them all, else None."""
    values = [value, *others]
    numbers = [_NUMBER.search(v) for v in values]
    if all(numbers):
        return float(numbers[0].group())
    lowered = [v.strip().lower() for v in values]
    scale = next((s for s in SCALES if all(v in s for v in lowered)), None)
    return float(scale.index(lowered[0])) if scale else None


def compared(values: list[str], texts: Iterable[str], *, names: dict[str, Any], described: dict[str, str],
             old: dict[str, tuple[str, dict[str, str]]], known: set[str],
             mentions: Callable[[str, str], bool]) -> list[str]:
    """``values`` kept, per name, where they stand as the customer's ``texts`` (``about`` that name) compare them
    to the old line (``old``: name -> (its item id, its ``labels``)), each comparison narrowing what the one before
    kept (``comparisons``; none kept: it narrows nothing); a value's option is its description's feature at the
    option's place among the labels, its price the feature that starts with "$". Order kept."""
    texts = list(texts)
    drop: set[str] = set()
    for name, group in by_name(values, names).items():
        if name not in old:
            continue
        old_id, options = old[name]
        kept = list(group)
        for option, how in comparisons(" ".join(about(texts, name, known, mentions)), options):
            at = {v: value_of(described.get(v, ""), option, options) for v in kept}
            mine = value_of(described.get(old_id, ""), option, options) if option == PRICE else options[option]
            if option != PRICE and old_id in described and value_of(described[old_id], option, options) != mine:
                continue  # the variant lines do not list the options in the labels' order
            if None in at.values():
                continue
            if how == 0:  # the same: no order needed
                kept = [v for v in kept if at[v] == mine] or kept
                continue
            ranks = {v: rank(x, [*at.values(), *([mine] if mine else [])]) for v, x in at.items()}
            if None in ranks.values():
                continue
            if abs(how) == 2:
                best = (max if how > 0 else min)(ranks.values())
                side = [v for v in kept if ranks[v] == best]
            else:
                base = rank(mine, at.values()) if mine is not None else None
                side = [] if base is None else [v for v in kept if (ranks[v] - base) * how > 0]
                by = amounts(" ".join(about(texts, name, known, mentions)), options).get(option)
                if base is not None and by is not None:  # "1000 more pieces": that many more, where one is
                    side = [v for v in side if ranks[v] == base + how * by] or side
            kept = side or kept
        drop |= set(group) - set(kept)
    return [v for v in values if v not in drop]


def value_of(description: str, option: str, options: dict[str, str]) -> str | None:
    """``option``'s value in a variant's ``description``: its feature at the option's place among the old line's
    labelled ``options``, or for ``PRICE`` the feature that starts with "$"; None where it has none."""
    parts = features(description)
    if option == PRICE:
        return next((f for f in parts if f.startswith("$")), None)
    place = list(options).index(option)
    return parts[place] if len(parts) > place else None
