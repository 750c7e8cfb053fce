"""Walking what look-ups return: its records (every mapping, at any depth), the values a path names, the fields of
the records holding a value, and the words that tell whether a message mentions a name.

A path is a key looked for at any depth, then optional sub-keys after dots: ``item_id`` (every value stored under
that key), ``variants`` (a mapping's keys: the variants are keyed by item id), ``payment_methods.id`` (each listed
method's ``id``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

import inflection

from chops.domain.operations import named


def _under(data: Any, key: str) -> Iterator[Any]:
    """Every value stored under ``key`` in ``data``, at any depth."""
    return (node[key] for node in records(data) if key in node)


def _descend(node: Any, keys: list[str]) -> Iterator[Any]:
    """``node[keys[0]][keys[1]]...``, mapped over lists on the way."""
    if not keys:
        yield node
    elif isinstance(node, (list, tuple)):
        for item in node:
            yield from _descend(item, keys)
    elif isinstance(node, dict) and keys[0] in node:
        yield from _descend(node[keys[0]], keys[1:])


def _ids(leaf: Any) -> Iterator[str]:
    """A mapping's keys, a list's scalars, or the scalar itself, as text."""
    if isinstance(leaf, dict):
        yield from (str(k) for k in leaf)
    elif isinstance(leaf, (list, tuple)):
        yield from (str(x) for x in leaf if _scalar(x))
    elif _scalar(leaf):
        yield str(leaf)


def _scalar(value: Any) -> bool:
    return value is not None and not isinstance(value, (bool, dict, list, tuple))


def values_at(data: Any, path: str) -> list[str]:
    """The values ``path`` (see the module docstring) finds in ``data``, first seen first, each once."""
    return list(dict.fromkeys(every_value(data, path)))


def record_fields(sources: Iterable[Any], keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{key: {value: field}}``: each record (a mapping at any depth) holding ``key`` gives its field under
    that key (an order's status, its item names) to each of its scalar values (the order's id) and to the keys
    of each mapping it holds (a product's name to its variants' item ids); a later
    source's record wins, so an order looked up this turn counts over the profile's overview."""
    found: dict[str, dict[str, Any]] = {key: {} for key in keys}
    for data in sources:
        for node in records(data):
            for key, fields in found.items():
                if node.get(key) is not None:
                    fields.update((value, node[key]) for value in scalars(node))
                    # and the keys of a mapping it holds: a product's variants, keyed by item id
                    fields.update((str(k), node[key]) for v in node.values() if isinstance(v, dict) for k in v)
    return found


_WORD = re.compile(r"[^\W\d_]+")


def stems(text: str) -> set[str]:
    """Lower-case words of 4 letters or more, each in the singular (``singular``: "boots" and "Boots" both "boot",
    "scarves" "scarf"), and each hyphenated word joined ("T-Shirt": "tshirt"). A stem is only compared with another:
    a final "ie" is written "y", as the rules' singular of "-ies" is ("hoodies" is "hoody", so "hoodie" is too)."""
    words = _WORD.findall(text.lower()) + [w.replace("-", "") for w in re.findall(r"\w+(?:-\w+)+", text.lower())]
    return {_IE.sub("y", singular(w)) for w in words if len(w) >= 4}


_IE = re.compile(r"ie$")


@lru_cache(maxsize=4096)
def singular(word: str) -> str:
    """An English word in the singular, by ``inflection``'s rules (irregular plurals too: "watches", "scarves",
    "bookshelves", "mice"; a final "s" cut alone read "scarves" as no "Scarf" and "watches" as no "Watch"). The
    rules are English; a word of another language is compared as both sides give it."""
    return inflection.singularize(word)


HAN = re.compile(r"[\u4e00-\u9fff]")  # a Chinese character: a word of its own where words have no spaces
IN_MESSAGE = 0.8  # the share of a request's words a message must hold for the request to be made of it (``made_of``)


def words_of(text: str) -> set[str]:
    """The words two texts are compared by: ``stems`` and each Chinese character."""
    return stems(text) | set(HAN.findall(text))


def made_of(part: str, text: str, share: float = IN_MESSAGE) -> bool:
    """Whether ``share`` of ``part``'s words (``words_of``) are in ``text``; a part of no such words is."""
    words = words_of(part)
    return not words or len(words & words_of(text)) >= share * len(words)


def values_in(sources: Iterable[Any], paths: Iterable[str]) -> list[str]:
    """The values ``paths`` find in any of ``sources``, first seen first, each once."""
    paths = list(paths)
    return list(dict.fromkeys(v for data in sources for path in paths for v in values_at(data, path)))


def names_of(field: Any) -> list[Any]:
    """A record's names field (``record_fields``) as a list: one name, a list of names, or none."""
    return field if isinstance(field, list) else [] if field is None else [field]


def mentioned(values: list[str], names: dict[str, Any], message: str) -> list[str]:
    """The ``values`` whose record's ``names`` (a name, or a list of names) ``message`` mentions: "the desk lamp
    I got" mentions the order holding "Desk Lamp" (``mentions``; words of 4 letters or more, so "set" or "pet"
    in a sentence mentions nothing)."""
    return [v for v in values if any(mentions(message, str(n)) for n in names_of(names.get(v)))]


# A count said before a name, up to two words between ("the two t-shirts", "both red lamps", "2 more mugs").
_COUNT = re.compile(r"\b(two|three|four|both|[2-4])((?:\s+[\w-]+){1,3})", re.IGNORECASE)
_NUMBERS = {"two": 2, "both": 2, "three": 3, "four": 4}


def counted(values: list[str], names: dict[str, Any], message: str) -> list[str]:
    """``values`` (records ``mentioned`` names) narrowed to those holding at least as many lines of a name as the
    ``message`` counts before it ("which two t-shirts did I order?": the order with two T-Shirt lines, not the one
    with one), where some do; else ``values``. Asked so, the 1.5B read the order with one t-shirt and answered for
    two (train task 24)."""
    need: dict[str, int] = {}
    for m in _COUNT.finditer(message):
        n = _NUMBERS.get(m.group(1).lower()) or int(m.group(1))
        for name in {str(x) for v in values for x in names_of(names.get(v))}:
            if mentions(m.group(2), name):
                need[name] = max(need.get(name, 0), n)
    kept = [v for v in values if all(sum(str(x) == name for x in names_of(names.get(v))) >= n
                                     for name, n in need.items())]
    return kept or values


# A name's other word said as the thing itself ("my jigsaw for a fancier one", "the vacuum, please"): the word ends its
# phrase, a stop or a word that starts no other thing following it, where "the smart thermostat" goes on to another
# product's head word.
_PHRASE_ENDS = r"(?=\s*(?:[^\w\s'-]|$)|\s+(?:for|from|in|on|at|to|with|and|or|but|that|which|who|i|i'd|i've|i'm|is|" \
               r"was|were|are|has|had|please|so|because|as|of|into|too|also|instead|again|back|since|if|then|it)\b)"


def mentions(message: str, name: str) -> bool:
    """Whether ``message`` has the head word of ``name``, its last (``stems``: "the lamps" mentions "Desk
    Lamp"; "smart thermostat" does not mention "Smart Watch"), or, when that is under 4 letters, another word; or
    a name of several words whole ("the pet bed": its words are too short to count alone, train task 28); or
    another word of 5 letters or more said as the thing itself (``_PHRASE_ENDS``: "exchange my jigsaw for …"
    mentions "Jigsaw Puzzle"; asked so, the 1.5B read the boots' order instead, and proposed a change of the boots
    for the jigsaw's request, train task 107); or so a word of 5 letters or more that ends the head word ("change my
    watch to …" mentions "Wristwatch": neither read nor offered the order holding it, the 1.5B changed another order's
    air purifier, train task 112; "the glass kettle" does not mention "Sunglasses")."""
    words = name.split()
    if len(words) > 1 and re.search(rf"\b{re.escape(name)}(?:e?s)?\b", message, re.IGNORECASE):
        return True
    said = stems(message)
    if not words:
        return False
    heads = stems(words[-1])
    if (heads or stems(name)) & said:
        return True
    ends = [w for w in said for head in heads if head.endswith(w) and head != w]
    return any(len(w) >= 5 and re.search(rf"\b{re.escape(w)}(?:e?s)?{_PHRASE_ENDS}", message, re.IGNORECASE)
               for w in [*words[:-1], *ends])


def records(data: Any) -> Iterator[dict]:
    """Every mapping in ``data``, at any depth (the one walk over look-up data: ids, names and descriptions)."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)


def scalars(node: dict) -> set[str]:
    """A record's scalar values, as text."""
    return {str(v) for v in node.values() if _scalar(v)}


def every_value(data: Any, path: str) -> list[str]:
    """``values_at`` without the de-duplication: an order lists an item once per line."""
    first, *rest = path.split(".")
    return [v for node in _under(data, first) for leaf in _descend(node, rest) for v in _ids(leaf)]


def holding(sources: list[Any], value: Any) -> list[dict]:
    """The records of ``sources`` with ``value`` among their scalars (an order by its id, an order's line by its
    item id)."""
    return [node for data in sources for node in records(data) if str(value) in scalars(node)]


def lines_in(sources: list[Any], within: Any, paths: Iterable[str]) -> list[str]:
    """The values at ``paths`` (an order's item ids) in the records holding ``within`` (the order's id), once per
    line."""
    return [v for node in holding(sources, within) for path in paths for v in every_value(node, path)]


# A record named by its place among the customer's ("my most recent order", "the order I placed last", "my first
# order"): the word, then the record's noun (up to two words between, no count: "my last two orders" are two), or the
# noun, then the word (up to four).
_LAST, _FIRST = r"most recent(?:ly)?|latest|last|newest", r"first|oldest|earliest"
_PLACED = (r"\b(?:(?:{w})(?!\s+(?:two|three|four|few|couple|\d))(?:\s+[\w-]+){{0,2}}?\s+{noun}\b"
           r"|{noun}\b(?:\s+[\w-]+){{0,4}}?\s+(?:{w})\b)")


def placed(values: list[str], noun: str, message: str) -> list[str]:
    """Of ``values`` in the order the customer's data lists them (oldest first), the last where ``message`` names
    the ``noun``'s record by that place ("the order I most recently placed"), the first where by the other ("my
    first order"); else all of them. Asked how much they paid for the order they placed last, the 1.5B read the
    first of three orders and answered its total (train task 67)."""
    for place, pick in ((_LAST, -1), (_FIRST, 0)):
        if values and re.search(_PLACED.format(w=place, noun=re.escape(noun)), message, re.IGNORECASE):
            return [values[pick]]
    return values


# An id as people type one: a run of letters, digits, '#', '_' or '-' holding a digit ("#W0001", "gift_card_7").
_TYPED_ID = re.compile(r"#?[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*")


def typed_ids(texts: Iterable[str]) -> list[str]:
    """The id-like tokens (a digit in them, 3 characters or more) the customer typed, first seen first."""
    return list(dict.fromkeys(m.group() for text in texts for m in _TYPED_ID.finditer(text) if len(m.group()) >= 3))


# An id named as the one whose value to take: "the address to be the same as order #W0000001", "the same address as
# #W0000001", "like the one on #W0000001", "my default address to the one on order #W0000001", "address as #W0000001".
_ALIKE = re.compile(r"\b(?:(?:same (?:[^\W\d_]+ )?as|as (?:on|in|for|of|with)|like|the one (?:on|in|of|for|from))\s+"
                    r"(?:(?:the|my)\s+)?(?:[^\W\d_]+\s+)?|as\s+)(#?[\w-]*\d[\w-]*)", re.IGNORECASE)


def alike_ids(text: str) -> list[str]:
    """The ids ``text`` names as the record whose value to take (``_ALIKE``), not the one to change."""
    return [m.group(1) for m in _ALIKE.finditer(text)]


def only_alike(text: str) -> set[str]:
    """The ids ``text`` types only as the record whose value to take (``alike_ids``), never as one to change."""
    alike = alike_ids(text)
    return {i for i in alike if text.count(i) == alike.count(i)}


SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n|(?<=[。！？；])")  # where a message's sentences (or clauses) end


def _shape(token: str) -> str:
    return re.sub(r"\d", "0", token.lstrip("#").casefold())


def the_other(text: str, value: str) -> str | None:
    """The one id of ``value``'s shape that ``text`` types and does not name only as the source of a value
    (``only_alike``), where ``value`` is one it does so name; else None. "For order #W1, change the address to be the
    same as order #W3": #W1 of #W3."""
    source = {t.casefold() for t in only_alike(text)}
    if value.casefold() not in source:
        return None
    others = {t.casefold(): t for t in typed_ids([text]) if _shape(t) == _shape(value) and t.casefold() not in source}
    return next(iter(others.values())) if len(others) == 1 else None


def near_word(text: str, word: str, value: str) -> str | None:
    """The one id of ``value``'s shape (its letters, its length) that the sentences of ``text`` naming ``word`` type
    (``operations.named``), where ``value`` is another id ``text`` types; else None. "Why are #W1 and
    #W2 both pending? If you can't ship #W2 in 5 days, I want to cancel it": the 1.5B cancelled #W1 (train task 59)."""
    def key(token: str) -> str:
        return token.lstrip("#").casefold()
    if key(value) not in {key(t) for t in typed_ids([text])}:
        return None
    said = {key(t): t for sentence in SENTENCE.split(text) if named(word, sentence)
            for t in typed_ids([sentence]) if _shape(t) == _shape(value)}
    if len(said) != 1 or key(value) in said:
        return None
    return ("#" if value.startswith("#") else "") + next(iter(said.values())).lstrip("#")
