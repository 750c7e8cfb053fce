"""Which kind of change the customer asked for: a swap nobody asked for is not proposed as if they had.

Asked to "return the vacuum cleaner, the headphones and the smart watch", the 1.5B model proposed their exchange
for variants the customer never mentioned (bagged for bagless, gold for black); asked to return everything but the
coffee machine, an exchange of the coffee machine; told "I no longer need the boots … just cancel the whole order",
a size change. The verifier passed each, and the scripted customer said yes to the change described.

So a swap (an operation with ``CHOICES_PAIRED`` arguments: old lines and the new items they become) is refused
before it is described, and the attempt redone with the reason (``chops.pipeline.tiers.refused_plan``), when the
request names the kind of a write that is no swap (the first word of its name: "return", "cancel") and no swap's
("exchange", "modify"), and the customer's words mention none of the features a new item has and its old line
lacks, nor compare with the old line ("a larger frame", "the cheapest": ``chops.pipeline.relative``). Each condition
alone is common in a swap asked for ("swap the lamp for a brighter one, or else return it" names no feature of the
lamp's variants; "change the boots to size 8" names no operation), so only all three refuse. So too a question that
names no change at all (no kind of write, no word such as "change", "swap", "replace", 换): asked "what's the storage
of the tablet I ordered?", the 1.5B proposed the tablet's exchange for one with more storage (train task 43); only a
question, since a customer who asked for the change before may say "the jigsaw to the easiest one". And a
swap of items the request does not name where it names others of the order ("just the desk lamp" and the water
bottle: ``other_items``), one for another variant where the customer asked for the same item (``not_the_same``), or
against the price the customer asked for ("only if they're cheaper" and a dearer one; "if it's less than 200 bucks"
and one at $226.11: ``chops.pipeline.prices``).

And any write of products the customer's messages never name where they name others of their orders
(``chops.pipeline.unspoken``): after a keyboard's return, the return of a kettle nobody spoke of; of one request split
off a message, those it does not name (the boots' change for the jigsaw's request). The other way round, a
write where the request names another kind and nothing of that write (``unasked_kind``): asked which laptop to
exchange, the 1.5B proposed the chosen laptop's return. And such a write for a question that names no change at all
(``asking.unasked_write``): "what's the price of the speaker I bought?" became the order's address change. And the
same item asked for (``chops.pipeline.same``).

A request of another kind (``another_kind``) is not shown the variants of the products it names with the order's
look-up (``Operation.follows``): they only invite a swap (train tasks 46 and 48).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from chops.domain.operations import Operation, named
from chops.domain.outcomes import Outcome, OperationResult
from chops.pipeline.asking import ASKED, asks_only, asks_options, names_change, question, swap_word, unasked_write
from chops.pipeline.choices import lines_of
from chops.pipeline.context import FINAL
from chops.pipeline.described import descriptions, features, mentioned_features
from chops.pipeline.relative import PRICE, comparisons, labels
from chops.pipeline.same import not_the_same
from chops.pipeline.splitting import clause_of
from chops.pipeline.unspoken import unspoken
from chops.pipeline.walk import mentions, names_of, record_fields, records
from chops.pipeline.fallbacks import fallback, otherwise
from chops.pipeline.prices import against_price, bounded, over_budget
from chops.pipeline.swapped import unkept, unmet, unsaid
from chops.pipeline.whole import partial, refusal_message


def another_kind(request: str, operations: Iterable[Operation]) -> str | None:
    """The kind of a write that is no swap which ``request`` names ("return", "cancel"), where it names no swap's kind
    ("exchange", or "modify": "exchange" said of a pending order's item change asks for that swap); else None."""
    writes = [op for op in operations if op.writes]
    if any(op.choice_pairs() and op.named_in(request) for op in writes):
        return None
    return next((op.kind for op in writes if not op.choice_pairs() and op.named_in(request)), None)


def unasked_kind(op: Operation, request: str, operations: Iterable[Operation], said: str = "") -> str | None:
    """The kind of another write ``request`` asks for ("exchange", "cancel"; not after a negation in its clause: "I
    don't want to cancel any orders") where it does not name ``op`` (``names_write``) nor, naming no swap, asks for
    ``op`` by the state its record is in (``Operation.asked_as``, in the request or the customer's clause it was
    ``said`` in: "cancel the lamp I received" asks for its return, "exchange the lamp I received" does not); else None.
    Only a kind that names one write counts: "modify" may be any change of a pending order. Asked which laptop to
    exchange, the 1.5B proposed the chosen one's return; told "if not, cancel the charger I just bought, since it goes
    with the tablet", the lost tablet's return, which the customer's yes then committed (train task 31). A word naming
    an argument of the write asked for names no other ("return it to the original payment method")."""
    writes, affirmed = [o for o in operations if o.writes], _affirmed(request)
    asked = [o for o in writes if o.kind != op.kind and sum(w.kind == o.kind for w in writes) == 1
             and o.named_in(affirmed)]
    own = _without_arguments(affirmed, asked)  # "return it to the original payment method": the return's argument
    if names_write(op, own, writes) or (op.asked_by and op.asked_in([own], own)):
        return None  # named, or asked for in its own words ("move #W… to 12 Elm St")
    if not asked or (not any(o.choice_pairs() for o in asked)
                     and any(named(w, f"{request} {said}") for w in op.asked_as)):
        return None
    return next((o.kind for o in asked if o.choice_pairs()), asked[0].kind)


def _without_arguments(text: str, writes: list[Operation]) -> str:
    """``text`` without the words that name an argument of one of ``writes`` ("payment" of ``payment_method_id``): they
    say how that write is to be done, not that another is asked for. Told "then return everything in both orders to
    the original payment methods", the 1.5B proposed a payment change, again and again (train task 11)."""
    parts = {p for o in writes for a in o.arg_names() for p in a.lower().split("_") if len(p) > 3}
    if not parts:
        return text
    return re.sub(rf"\b(?:{'|'.join(map(re.escape, sorted(parts)))})\w*", " ", text, flags=re.IGNORECASE)


# A negation or a condition, and what follows it in its clause, asks for nothing: "I don't want to cancel any orders";
# "if the tablet is returned, also cancel the charger" asks for the cancel alone (the 1.5B proposed the charger's
# return, and nothing refused it: train task 30).
_NEGATION = re.compile(r"\b(?:not|no|never|without|if|unless)\b|n't\b|不要|如果", re.IGNORECASE)
_CLAUSES = re.compile(r"([,;:.!?，。；！？])")


def _affirmed(text: str) -> str:
    """``text`` with each clause cut at its first negation or condition: "I do not want to return it; please cancel
    it" keeps "I do " and "; please cancel it"; "if it is returned, cancel the charger" keeps ", cancel the charger"."""
    return "".join(_NEGATION.split(part, 1)[0] for part in _CLAUSES.split(text))


def names_write(op: Operation, request: str, operations: Iterable[Operation]) -> bool:
    """Whether ``request`` names the write ``op``: its kind ("cancel", what else it is ``called``) or a word of its name
    that no swap's name holds ("address", "payment"). A swap counts as named: "make the lamp the brighter one" names
    none of a swap's words."""
    shared = {w for o in operations if o.writes and o.choice_pairs() for w in o.words}
    return bool(op.choice_pairs()) or op.named_in(request) or any(named(w, request) for w in set(op.words) - shared)


def no_swap_asked(request: str, texts: Iterable[str], operations: Iterable[Operation], sources: Iterable[Any]) -> bool:
    """Whether ``request`` asks for a write that is no swap ("return", "cancel") and for nothing a swap would need: no
    swap's kind, no word of a change (``asking.swap_word``), no question, and the customer's ``texts`` compare no
    option of the lines the ``sources`` hold ("a larger one"; a price compared picks the line: "return the pricier
    tablet"). Then no swap is offered (``unasked_swap``'s case, ruled out before the model is asked): told "return
    everything except the coffee machine", the 1.5B, shown the order, proposed the coffee machine's exchange, then,
    told why that was refused, wrote the refusal back (train task 73); told to return the dearer of two tablets, a
    tablet's exchange."""
    operations = list(operations)
    if another_kind(request, operations) is None or swap_word(request, operations) or question(request):
        return False
    # A price compared picks the line to return ("the more expensive of the two tablets"), not a new item.
    options = _options(node for data in sources for node in records(data))
    return all(option == PRICE for option, _ in comparisons(" ".join(texts), options))


def _options(nodes: Iterable[dict]) -> dict[str, str]:
    """The labelled options of the lines ``nodes`` hold (``relative.labels`` of their texts)."""
    return labels(v for node in nodes for v in node.values() if isinstance(v, str))




def unasked_swap(op: Operation, args: Mapping[str, Any], operations: Iterable[Operation], request: str,
                 texts: Iterable[str], sources: Iterable[Any], message: str | None = None) -> str | None:
    """The kind the ``request`` asks for instead of the swap ``op`` with ``args``, or None (not a swap, or one the
    customer may have asked for): see the module docstring. ``texts``: the customer's messages; ``sources``: the
    profile's data and the look-ups, which describe the old lines and the new items; ``message``: the whole message
    where ``request`` is one request split off it."""
    pairs = op.choice_pairs()
    if not pairs:
        return None
    texts, operations = list(texts), list(operations)
    # Only a question, or what a question before it asked again, naming no change: "The tracking number and the
    # camera's price, please." after asking both was proposed as the cameras' exchange (our own conversations).
    again = any(t != request and asks_only(t, operations, ()) for t in texts) and not names_change(request, operations)
    asked = not swap_word(request, operations) and (question(request) or again)
    instead = another_kind(request, operations) or (ASKED if asked else None)
    if instead is None:
        return None
    nodes = [node for data in sources for node in records(data)]
    # A question split off a ``message`` is read without the rest of it: "what's the tracking number?" had the rest
    # ("exchange the tablet for the same item") count as a comparison, and a tablet's exchange was committed (task 30).
    texts = [t for t in texts if instead != ASKED or message is None or t != message]
    if any(named(str(new), text) for pair in pairs.values() for new in args.get(pair["partner"]) or ()
           for text in texts):
        return None  # the new item's id typed: "the laptop to item 9844888101"
    # A question's own comparison asks about the variants ("what's the cheapest keyboard?": the 1.5B proposed the
    # exchange for it, task 89); one said before it asked for a swap ("a cheaper one, please" … "can you do that?").
    compared = [t for t in texts if instead != ASKED or t != request]
    if comparisons(" ".join(compared), _options(nodes)):
        return None  # "a larger frame", "the cheapest one": described relative to the old line
    lines = descriptions(nodes)
    for old_arg, pair in pairs.items():
        olds, news = args.get(old_arg) or [], args.get(pair["partner"]) or []
        for old, new in zip(olds, news):
            wanted = set(features(lines.get(str(new), ""))) - set(features(lines.get(str(old), "")))
            if wanted & mentioned_features(lines.get(str(new), ""), texts):
                return None  # a feature they asked for: a swap after all
    return instead


def other_items(op: Operation, args: Mapping[str, Any], request: str, sources: Iterable[Any]) -> str | None:
    """The item names ``request`` speaks of where it names some line of the swap's record but none of the products the
    swap changes ("just the desk lamp" and a swap of the water bottle); else None. Told "only the desk lamp, not the
    water bottle", the 1.5B proposed the water bottle's exchange again, and the customer's next yes committed it (train
    task 7; 8 before)."""
    sources, keys = list(sources), op.choice_names()
    fields = record_fields(sources, set(keys.values()))
    record = next((args.get(pair["in"]) for pair in op.choice_pairs().values()), None)
    lines = lines_of(op, record, sources) if record is not None else {}
    held = {str(n) for arg in op.choice_pairs() if arg in keys for v in lines.get(arg, ())
            for n in names_of(fields[keys[arg]].get(v))}
    swapped = {str(n) for pair in op.choice_pairs().values() if pair["partner"] in keys
               for v in args.get(pair["partner"]) or () for n in names_of(fields[keys[pair["partner"]]].get(str(v)))}
    said = sorted(n for n in held if mentions(request, n))
    return ", ".join(said) if said and swapped and not any(mentions(request, n) for n in swapped) else None


def unasked_refusal(op: Operation, args: Mapping[str, Any], operations: Iterable[Operation], request: str,
                    texts: Iterable[str], sources: Iterable[Any], message: str | None = None) -> OperationResult | None:
    """Why the write ``op`` with ``args`` is not run: of a whole record asked for a part of it (``whole.partial``:
    the customer is told, ``FINAL``), of products nobody named (``unspoken``; of one request of a ``message``, that
    the request does not name), or a swap not asked for
    (``unasked_swap``, ``other_items``, a condition of theirs failed: ``_condition_failed``); else None. The message
    reads as the customer would be told it; where a condition of theirs failed, it ends with what they said to do
    then (``otherwise``)."""
    texts, sources, operations = list(texts), list(sources), list(operations)
    parts = partial(op, args, request, sources, message)
    if parts is not None:  # the whole record for a part of it: the customer decides, unless they said what then
        said = otherwise([request, *texts])
        why = refusal_message(op, args, *parts)
        return OperationResult(operation=op.name, outcome=Outcome.REFUSED_PRECONDITION, data={
            "asked": parts[0], **({"fallback": fallback(op, args, said, sources)} if said else {FINAL: True})},
            message=why + (f"; for that case you said: \"{said}\"" if said else "."))
    if unasked_write(op, request, operations):  # not offered to the redo: it may answer the question instead
        return _refused(op, ASKED, f"you asked to {ASKED}, not for a change", other_kind=True)
    asked = unasked_kind(op, request, operations, clause_of(request, message) if message else "")
    if asked is not None:  # the write itself is what was not asked for: the redo is not offered it again, and
        # proposes the write asked for where it is no swap (whose new items are to be found first)
        kind = [o.name for o in operations if o.writes and o.kind == asked and not o.choice_pairs()]
        return _refused(op, asked, f"you asked to {asked}, not to {op.kind}", other_kind=True,
                        instead=kind[0] if kind else None)
    instead = unasked_swap(op, args, operations, request, texts, sources, message)
    if instead is not None:
        # The swap itself is not asked for: the redo is not offered it (``tiers.redo``), and proposes the one write of
        # the kind asked for: told "could you cancel it instead?", the 1.5B proposed the item's removal, then, barred
        # from it, answered "I can't help with that" (train task 69).
        kind = [o.name for o in operations if o.writes and not o.choice_pairs() and o.kind == instead]
        return _refused(op, instead, f"you asked to {instead}, not for other items in place of these", other_kind=True,
                        instead=kind[0] if len(kind) == 1 else None)
    named_instead = other_items(op, args, request, sources)
    if named_instead is not None:
        return _refused(op, named_instead, f"you asked about the {named_instead}, not the items this would change")
    # One request of a message (``chops.pipeline.agenda``) says by its own words which products it is about: for the
    # jigsaw's request, the 1.5B proposed a change of the boots the message's first request named (train task 107).
    others = unspoken(op, args, request, texts, sources) \
        or (unspoken(op, args, request, [request], sources) if message not in (None, request) else None)
    if others is not None:
        return _refused(op, others[0], f"you spoke of the {others[0]}, not of the {others[1]} this would change")
    failed = _condition_failed(op, args, request, texts, sources)
    if failed is None:
        return None
    asked, why = failed
    said = otherwise([request, *texts])
    if said is None:
        return _refused(op, asked, why)
    # A fallback of the same kind ("then only exchange the thermostat") leaves the swap offered to the redo.
    return _refused(op, asked, f"{why}; for that case you said: \"{said}\"", fallback=fallback(op, args, said, sources),
                    again=op.named_in(said))


def _condition_failed(op: Operation, args: Mapping[str, Any], request: str, texts: list[str],
                      sources: list[Any]) -> tuple[str, str] | None:
    """(what the customer asked for, why the swap ``op`` with ``args`` is not it) where it fails a condition of theirs:
    the same item (``not_the_same``), options kept (``swapped.unkept``), a variant with the features they named
    (``swapped.unmet``), the price's side (``prices.against_price``) or a bound (``prices.over_budget``), or nothing
    said of what it becomes (``swapped.unsaid``) where the customer did not ask to hear the options; else None."""
    changed = not_the_same(op, args, request, texts, sources)
    if changed is not None:
        gone = ", which is not available now" if changed[1] else ""
        return "the same item", f"you asked for the same item{gone}, and this one differs ({changed[0]})"
    kept = unkept(op, args, texts, sources)
    if kept is not None:
        return f"the same {kept[0]}", f"you asked for the same {kept[0]}, and this new item has {kept[1]}"
    lacking = unmet(op, args, texts, sources)
    if lacking is not None:
        return lacking
    side = against_price(op, args, texts, sources)
    if side is not None:
        return side, f"you asked for a {side} one, and this new item is not {side}"
    outside = over_budget(op, args, texts, sources)
    if outside is not None:
        options = f" ({outside[2]})" if outside[2] else ""
        return outside[0], f"you asked for one {outside[0]}, and this new item{options} costs {outside[1]}"
    # Asked to hear the options, the customer is told them (``chops.pipeline.listing``), not told they said nothing.
    untold = None if bounded(texts) or asks_options(request) else unsaid(op, args, texts, sources)
    if untold is not None:
        return (f"what to change the {untold[0]} to", f"you have not said what you would like the {untold[0]} "
                f"changed to (this new item has {untold[1]})")
    return None


def _refused(op: Operation, asked: str, message: str, other_kind: bool = False,
             fallback: str | None = None, again: bool = False, instead: str | None = None) -> OperationResult:
    return OperationResult(operation=op.name, outcome=Outcome.REFUSED_INVALID_ARG, message=message,
                           data={"asked": asked, **({"other_kind": True} if other_kind else {}),
                                 **({"fallback": fallback} if fallback else {}), **({"again": True} if again else {}),
                                 **({"instead": instead} if instead else {})})
