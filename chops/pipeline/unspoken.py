"""Products nobody named: a write of products the customer's messages never name, where they name others of their
orders, is refused before it is described (``unspoken``: ``chops.pipeline.kinds.unasked_refusal`` calls it); the lines
of products they name only to say which order they mean, or say not to change, are left out of it (``unmarked``: a
repair, ``chops.pipeline.repairs``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from chops.domain.operations import Operation, named
from chops.pipeline.several import ALL_BUT, EVERY, EVERY_ZH, pattern
from chops.pipeline.walk import holding, mentions, names_of, record_fields, scalars, stems

# Words by which a request takes in what it does not name: "return everything but the lamp", "cancel all my orders",
# "another order of mine went to the old address".
_ALL_OF = pattern((*EVERY, *ALL_BUT), (*EVERY_ZH, "都", "另"))
_WHOLE = pattern(("all", "every", "everything", "whole", "entire", "rest"), EVERY_ZH)  # the record, not "both" lines
# A record told by what it holds: "my pending order with the tablet", "the order that has the kettle and the scarf",
# "the watch that came with my notebook" (own6: the 1.5B returned the notebook too).
# What it holds ends before a word that starts what the customer asks ("… with the tablet to a 7-inch one", "… and
# change …"); "and" goes on with it only before an article ("… and the scarf").
_STOP = r"(?:to|for|from|into|in|on|please|and|but|so|as|i|i'd|i'm|can|could|would|will|should|change|swap|switch|" \
        r"make|exchange|return|cancel|replace|send|is|was)\b"
_HOLDING = re.compile(r"\b(?:(?:order|purchase|package|shipment)s?\s+(?:with|that (?:has|had|contains|included)|which "
                      r"(?:has|had)|containing|holding|including)|(?:came|arrived|delivered|shipped|got|bought|ordered)"
                      r"\s+(?:together\s+)?(?:with|alongside))\s+"
                      rf"(?P<what>(?:(?!{_STOP})[\w'-]+\s*|,?\s*and\s+(?=(?:the|my|a|an)\b)){{1,9}})", re.IGNORECASE)
# What the customer says not to change: "only the desk lamp, not the water bottle", "everything except the kettle",
# "cancel the boots but keep the kettle" (train task 31: the order holding both was cancelled).
_NOT_THIS = re.compile(r"\b(?:not|except(?: for)?|without|apart from|other than|keep(?:ing)?|leav(?:e|ing))\s+"
                       rf"(?P<what>(?:the|my|a|an|that)\s+(?:(?!{_STOP})[\w'-]+\s*){{1,4}})", re.IGNORECASE)


def unspoken(op: Operation, args: Mapping[str, Any], request: str, texts: Iterable[str],
             sources: Iterable[Any]) -> tuple[str, str] | None:
    """(the products the customer's ``texts`` name, those the write changes) where the write ``op`` with ``args``
    changes only products none of their messages name, even in part ("watch" of a Wristwatch), while they name other
    products of their orders (the lines it lists, else the record it names: ``CHOICES_MENTIONED``), and the
    ``request`` neither types the record's id, nor names it by its state ("my pending order": ``CHOICES_WHERE``), nor
    takes in more than it names ("all", "everything but …", "the other order"); else None. After the keyboard's return
    the 1.5B proposed the return of a kettle nobody had spoken of, and the customer's "yes, that's everything"
    committed it (train task 89)."""
    keys, texts = op.choice_names(), list(texts)
    partners = {pair["partner"] for pair in op.choice_pairs().values()}
    mine = [arg for arg in keys if arg not in partners and args.get(arg) is not None]
    lines = [arg for arg in mine if isinstance(args[arg], list)] or mine
    typed = request.lower()
    states = {s for arg in mine for values in op.choice_states().get(arg, {}).values() for s in values}
    if not lines or _ALL_OF.search(request) or any(named(s, request) for s in states) \
            or any(str(v).lower() in typed for arg in mine for v in names_of(args[arg])):
        return None
    fields = record_fields(sources, set(keys.values()))
    changed = {str(n) for arg in lines for v in names_of(args[arg]) for n in names_of(fields[keys[arg]].get(str(v)))}
    said_words = set().union(*(stems(t) for t in texts))
    if not changed or any(_said_in_part(n, said_words) for n in changed):
        return None
    held = {str(n) for key in set(keys.values()) for field in fields[key].values() for n in names_of(field)}
    said = sorted(n for n in held - changed if any(mentions(t, n) for t in texts))
    return (", ".join(said), ", ".join(sorted(changed))) if said else None


def _said_in_part(name: str, said_words: set[str]) -> bool:
    """Whether a word of ``name`` is one of the customer's ``said_words`` (``walk.stems``) or has one as a part
    (``_part_of``)."""
    return any(_part_of(w, word) for word in stems(name) for w in said_words)


def _part_of(said: str, word: str) -> bool:
    """Whether the customer's word ``said`` is ``word`` or a part of it of 4 letters or more at either end ("watch" of
    "wristwatch"; not "le", which is "less" cut of its "s", inside "kettle")."""
    return said == word or (len(said) >= 4 and (word.startswith(said) or word.endswith(said)))


def not_to_change(op: Operation, args: Mapping[str, Any], request: str, texts: Iterable[str],
                  sources: Iterable[Any]) -> set[str]:
    """The products the write ``op`` with ``args`` changes that the customer's ``texts`` name only to tell which
    record they mean ("in my pending order with the tablet, change the bulb to daylight": ``_HOLDING``), where they
    name other products it changes besides, and the ``request`` does not take in the whole record ("all",
    "everything"; "both" counts what it names); and those the ``request`` names only as not to change, where it names
    one it changes ("only the desk lamp, not the water bottle": ``_NOT_THIS``; the 1.5B proposed both again, and the
    customer's yes committed them, train task 7); and, beside products named, those none of the ``texts`` name where
    the ``request`` takes in no more than it names."""
    keys, texts, lines = op.choice_names(), list(texts), _lines(op, args)
    if not lines or _WHOLE.search(request):
        return set()
    fields = record_fields(sources, set(keys.values()))
    changed = {str(n) for arg in lines for v in args[arg] for n in names_of(fields[keys[arg]].get(str(v)))}
    bare = [_blanked(_HOLDING, t) for t in texts]
    # Beside products asked for, those no message names, where the request takes in no more ("all", "everything
    # but"): asked to "return it" (a watch), the 1.5B listed every line of an order holding one (own6).
    said_words, typed = set().union(*(stems(t) for t in texts)), " ".join(texts).lower()
    # A line whose id (or product's, or new item's) the customer typed is named too ("change item 1656367028 to …").
    ids = {str(n) for arg in lines for i, v in enumerate(args[arg]) if _typed(op, args, arg, i, sources, typed)
           for n in names_of(fields[keys[arg]].get(str(v)))}
    unnamed = {n for n in changed - ids
               if not any(mentions(t, n) for t in texts) and not _said_in_part(n, said_words)}
    if _ALL_OF.search(request) or not any(mentions(_blanked(_NOT_THIS, t), n) for n in changed for t in bare):
        unnamed = set()
    asked = {n for n in changed if any(mentions(t, n) for t in bare)}
    only = {n for n in changed - asked if any(mentions(t, n) for t in texts)}
    # The newest words count over the earlier: "only the desk lamp, not the water bottle", after both were asked for.
    wanted = {n for n in changed if mentions(_blanked(_NOT_THIS, _blanked(_HOLDING, request)), n)}
    refused = {n for n in changed - wanted if mentions(request, n)}
    return (only if asked else set()) | (refused if wanted else set()) | unnamed


def _typed(op: Operation, args: Mapping[str, Any], arg: str, i: int, sources: list[Any], typed: str) -> bool:
    """Whether the ``typed`` text holds the id of line ``i`` of ``arg``, of its swap's new item, or a scalar of a record
    holding it (its product's id: ``walk.holding``)."""
    partner = op.choice_pairs().get(arg, {}).get("partner")
    new = (args.get(partner) or [])[i:i + 1] if partner else []
    line = str(args[arg][i])
    held = [x for node in holding(sources, line) for x in scalars(node)]
    return any(len(v) >= 4 and v.lower() in typed for v in [line, *map(str, new), *held])


def kept_out(text: str) -> str:
    """``text`` without the products it says not to change (``_NOT_THIS``)."""
    return _blanked(_NOT_THIS, text)


def _blanked(pattern: re.Pattern[str], text: str) -> str:
    """``text`` with what each match of ``pattern`` holds (its ``what`` group) blanked out."""
    return pattern.sub(lambda m: m.group(0)[:m.start("what") - m.start()] + " ", text)


def unmarked(op: Operation, args: dict[str, Any], request: str, texts: Iterable[str],
             sources: Iterable[Any]) -> dict[str, Any] | None:
    """``args`` without the lines (and a swap's new items in their places) of the products the customer named only to
    tell which record they mean, or says not to change (``not_to_change``); else None. Told "in my pending order with
    the tablet, …", the 1.5B listed a new tablet too, the tablet's line was paired with it, and the customer's yes
    committed a change of the tablet (our own conversations); refused instead, the model proposed the same again."""
    sources = list(sources)
    only = not_to_change(op, args, request, texts, sources)
    if not only:
        return None
    keys, partners = op.choice_names(), {arg: pair["partner"] for arg, pair in op.choice_pairs().items()}
    fields = record_fields(sources, set(keys.values()))
    out = dict(args)
    for arg in _lines(op, args):
        kept = [i for i, v in enumerate(args[arg]) if not {str(n) for n in names_of(fields[keys[arg]].get(str(v)))}
                & only]
        out[arg] = [args[arg][i] for i in kept]
        partner = partners.get(arg)
        if partner and isinstance(args.get(partner), list):
            out[partner] = [args[partner][i] for i in kept if i < len(args[partner])]
    return out


def _lines(op: Operation, args: Mapping[str, Any]) -> list[str]:
    """The arguments of ``op`` that list the record's lines it changes (not a swap's new items)."""
    partners = {pair["partner"] for pair in op.choice_pairs().values()}
    return [arg for arg in op.choice_names() if arg not in partners and isinstance(args.get(arg), list)]
