"""A swap's and a return's lines as the record holds them: repairs of the lines a small model wrote.

The grammar (``chops.pipeline.choices``) offers only ids the conversation has seen; these mend the calls a 1.5B model
still writes wrong with them: items exchanged for themselves (``for_themselves``: their return), a swap's old lines not
beside their new items' products (``paired``), a product's id written as its line (``by_product``), a line listed more
often than the record holds it (``capped``). ``chops.pipeline.repairs`` applies them in its order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.choices import lines_of, record_arg
from chops.pipeline.walk import lines_in, record_fields


def for_themselves(op: Operation, args: dict[str, Any]) -> bool:
    """Whether every ``CHOICES_PAIRED`` argument of ``args`` pairs each of its values with itself (the order's lines
    exchanged for the same items): asked to return four items, the 1.5B proposed that, where no product was read."""
    pairs = op.choice_pairs()
    return bool(pairs) and all(isinstance(args.get(arg), list) and args.get(arg)
                               and args.get(arg) == args.get(pair["partner"]) for arg, pair in pairs.items())


def paired(op: Operation, args: dict[str, Any], sources: Iterable[Any]) -> dict[str, Any] | None:
    """``args`` with each paired argument (``CHOICES_PAIRED``) derived from its partner, or None when nothing
    changes or it cannot be derived. For each partner value (a new item), the first unused value (an order
    line) of the record ``args[in]`` names that shares its ``by`` (the product): a 1.5B model chose the right
    new items but put the headphones' line beside the keyboard's variant, or one line twice. A partner value
    repeated beyond the lines of its group is dropped: the 1.5B wrote one t-shirt swap ten times over."""
    sources = list(sources)
    out = dict(args)
    for arg, pair in op.choice_pairs().items():
        partners, within = args.get(pair["partner"]), args.get(pair["in"])
        if not isinstance(partners, list) or not partners or within is None:
            continue
        groups = record_fields(sources, {pair["by"]})[pair["by"]]
        lines = lines_in(sources, within, op.choice_keys()[arg])
        derived: list[str] = []
        kept: list[Any] = []
        taken: set[int] = set()  # each line once: an item on two lines may be changed twice
        proposed, written = [str(v) for v in args.get(arg) or ()], set()
        for k, new in enumerate(partners):
            # One line and its new item written twice is the model repeating itself, not a second line of the
            # product (unless the record holds the item twice): told to change "the 17-inch laptop", the 1.5B wrote
            # the 13-inch one's swap twice, and both laptops were changed (train task 35). "Both", "all" take in
            # every line (``together.all_of_them``).
            pair_written = (proposed[k] if k < len(proposed) else None, str(new))
            if pair_written[0] is not None and pair_written in written and lines.count(pair_written[0]) < 2:
                continue
            written.add(pair_written)
            group = groups.get(str(new))
            at = next((i for i, line in enumerate(lines) if i not in taken and group is not None
                       and groups.get(line) == group), None)
            if at is None and new in kept:
                continue  # the same new item again with no line left for it: the model repeating itself
            if at is None or (lines[at] == str(new) and str(new) not in map(str, args.get(arg) or ())):
                # A new item of a product the record does not hold, or one of the record's own lines the model wrote
                # as a new item (the tablet's return became the camera's exchange for itself: train task 84): left
                # as proposed, for the platform to refuse.
                return None
            taken.add(at)
            derived.append(lines[at])
            kept.append(new)
        out[arg], out[pair["partner"]] = derived, kept
    return out if out != args else None


def by_product(op: Operation, args: dict[str, Any], sources: Iterable[Any]) -> dict[str, Any] | None:
    """``args`` with each old line of a swap that is no line of its record but the product (``CHOICES_PAIRED``'s
    ``by``) of exactly one of them replaced by that line, or None when nothing changes: "change item 1656367028 to
    item 1421289881" named the keyboard's product id as the item, and the platform refused the swap of a line the
    order does not have (train task 21)."""
    sources, out = list(sources), dict(args)
    for arg, pair in op.choice_pairs().items():
        values, within = args.get(arg), args.get(pair["in"])
        if not isinstance(values, list) or within is None:
            continue
        lines = list(dict.fromkeys(lines_in(sources, within, op.choice_keys()[arg])))
        groups = record_fields(sources, {pair["by"]})[pair["by"]]
        out[arg] = [v if str(v) in lines or len(of := [x for x in lines if groups.get(x) == str(v)]) != 1 else of[0]
                    for v in values]
    return out if out != args else None


def capped(op: Operation, args: dict[str, Any], sources: Iterable[Any]) -> dict[str, Any] | None:
    """``args`` with each list of its record's lines (a return's item ids) holding a value no more often than the
    record's lines do, or None when nothing changes; a swap's are ``paired``. Asked to return a smart watch, the 1.5B
    listed the order's one watch twice, and the platform refused the return (train task 92)."""
    arg = record_arg(op)
    if op.choice_pairs() or arg is None or args.get(arg) is None:
        return None
    lines = lines_of(op, args[arg], list(sources))
    out = dict(args)
    for key, value in args.items():
        if not isinstance(value, list) or key not in lines:
            continue
        room, kept = Counter(lines[key]), []
        for v in value:
            if str(v) in room and room[str(v)] == 0:
                continue  # more often than the record holds it
            room[str(v)] -= str(v) in room
            kept.append(v)  # one of its lines, or no line of it, which the platform judges
        out[key] = kept
    return out if out != args else None
