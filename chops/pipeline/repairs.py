"""A proposed call as the platform is asked to run it: the executor's repairs of what a small model proposes.

Each repair mends one mistake the 1.5B model was seen to make, in this order: the call the last turn asked the
customer to complete keeps the values it had (``_kept``); a record the request names beside the change's kind is the
one changed (``walk.near_word``: "… #W2 …, I want to cancel it"); a change proposed for a record in a state the
operation does not take is that state's counterpart (``choices.counterpart``); items exchanged for themselves are
their return (``pairing.for_themselves``); a swap's old line named by its product's id is that line
(``pairing.by_product``); a swap's old lines are the lines of its new items' products (``pairing.paired``), and
another list of lines holds each no more often than the order does (``pairing.capped``; a repeat is the line named
and left out: ``together.in_place_of_repeats``), a product named only to say which order, or in the newest message
as not to change, is left out ("my order with the tablet", "not the water bottle": ``unspoken.unmarked``), a line
of a product the order holds several of is the one the
customer described ("the robotic one": ``which.meant``), and every line of a product the request asks for all of
("both skateboards": ``together.all_of_them``); a change the customer was asked to confirm and added to instead
keeps its lines beside the new ones (``together.with_dropped``); values the customer did not write and no look-up
returned are dropped (``grounding``); an address named from the customer's data is taken whole
(``completion.completed``), one named as a place is that one ("my NYC address": ``completion.named_record``), and a
part only repeating another is empty (``completion.repeated``); a choice the customer has not made (a payment
method) is asked for, not guessed (``completion.unnamed``). Each repair made is noted in the executor step's trace
record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.asking import swap_word
from chops.pipeline.pairing import by_product, capped, for_themselves, paired
from chops.pipeline.relative import comparisons
from chops.pipeline.states import counterpart
from chops.pipeline.completion import completed, named_record, repeated, retyped, still_replaced, unnamed
from chops.pipeline.context import Step, TurnContext, asked_for_value
from chops.pipeline.grounding import ground_args, token_spans
from chops.pipeline.together import all_but, all_of_them, in_place_of_repeats, with_dropped
from chops.pipeline.which import meant as described_line
from chops.pipeline.unspoken import unmarked
from chops.pipeline.walk import near_word, only_alike, the_other


def repaired(operations: Mapping[str, Operation], ctx: TurnContext, name: str, proposed: dict[str, Any],
             known: Any, seen: list[Any], step: dict[str, Any]) -> Step:
    """The step to run for the proposed call ``name(proposed)``; ``known``: the look-ups' values grounding accepts,
    ``seen``: the profile's data and the look-ups' results; ``step``: the trace record the repairs are noted in."""
    kept = _kept(ctx, name, proposed)
    if kept is not None:  # the plan the customer was asked about, completed with their answer
        step.setdefault("kept", []).append({"operation": name, "proposed": proposed, "args": kept})
        proposed = kept
    near = _near_kind(operations[name], proposed, ctx.text)
    if near is not None:  # "if you can't ship #W2 in time, cancel it": the record the change is said of
        step.setdefault("near_kind", []).append({"operation": name, "proposed": proposed, "args": near})
        proposed = near
    instead = counterpart(operations[name], proposed, seen)
    if instead in operations:  # the same change for the state the order is in
        step.setdefault("switched", []).append({"from": name, "to": instead})
        name = instead
    # After the counterpart: a pending order's item change proposed for a delivered order, each item for itself, is
    # the exchange first, then the return (train task 10: the verifier passed the exchange of four items for themselves).
    # Not where the request asks for a swap and names no return: told "I'll take the most expensive one", the 1.5B
    # wrote the garden hose named turns before for itself, and its return was committed on the customer's yes (train
    # task 29); refused as it is, the swap is redone.
    meant = operations[name].unchanged
    if meant in operations and for_themselves(operations[name], proposed) and (
            operations[meant].named_in(ctx.text) or not (swap_word(ctx.text, operations.values())
                                                         or comparisons(ctx.text, ()))):
        # Items exchanged for themselves: their return (the arguments the return takes, as proposed).
        step.setdefault("switched", []).append({"from": name, "to": meant})
        name, proposed = meant, {k: v for k, v in proposed.items() if k in operations[meant].arg_names()}
    product = by_product(operations[name], proposed, seen)
    if product is not None:  # a line named by its product's id
        step.setdefault("by_product", []).append({"operation": name, "proposed": proposed, "args": product})
        proposed = product
    pairs = paired(operations[name], proposed, seen) or capped(operations[name], proposed, seen)
    if pairs is not None:  # the old lines of the new items' products; no line more often than the order has it
        # and a line written twice is the named one left out
        pairs = in_place_of_repeats(operations[name], proposed, pairs, seen, ctx.text) or pairs
        step.setdefault("paired", []).append({"operation": name, "proposed": proposed, "args": pairs})
        proposed = pairs
    marked = unmarked(operations[name], proposed, ctx.text, ctx.user_texts, seen)
    if marked is not None:  # "my order with the tablet": the tablet only says which order
        step.setdefault("unmarked", []).append({"operation": name, "proposed": proposed, "args": marked})
        proposed = marked
    described = described_line(operations[name], proposed, ctx.user_texts, seen)
    if described is not None:  # "the robotic one": the line of that product the customer described
        step.setdefault("meant", []).append({"operation": name, "proposed": proposed, "args": described})
        proposed = described
    every = all_of_them(operations[name], proposed, seen, ctx.text)
    if every is not None:  # "both skateboards": every line of the product, not one
        step.setdefault("all_of_them", []).append({"operation": name, "proposed": proposed, "args": every})
        proposed = every
    but = all_but(operations[name], proposed, seen, ctx.text)
    if but is not None:  # "everything except the coffee machine": every line of the record but the one named
        step.setdefault("all_but", []).append({"operation": name, "proposed": proposed, "args": but})
        proposed = but
    added = with_dropped(operations[name], proposed, ctx.dropped, ctx.text)
    if added is not None:  # "I also want to return the watch": the change the customer was asked about, and this
        step.setdefault("added", []).append({"operation": name, "proposed": proposed, "args": added})
        proposed = added
    args, dropped = ground_args(proposed, ctx.user_texts, known, operations[name].args_model, ctx.now)
    # After grounding: a part it dropped (a second line the model made up) is empty, so filled too.
    whole = completed(operations[name], args, seen, typed=lambda value: any(
        token_spans(value, text, ignore_case=True) for text in ctx.user_texts))
    if whole is not None:  # an address of the customer's data, taken whole
        step.setdefault("completed", []).append({"operation": name, "args": whole})
        args, dropped = whole, [d for d in dropped if whole.get(d) is None]
    place = named_record(operations[name], args, seen, ctx.text)
    if place is not None:  # "to my NYC address": that record, not the one the model copied
        step.setdefault("named_record", []).append({"operation": name, "args": place})
        args = place
    typed = retyped(operations[name], args, ctx.user_texts)
    if typed is not None:  # "it should be 445 Maple Drive": not the 443 of their data
        step.setdefault("retyped", []).append({"operation": name, "args": typed})
        args = typed
    once = repeated(operations[name], args, ctx.user_texts)
    if once is not None:  # the city written as the second line too
        step.setdefault("repeated", []).append({"operation": name, "args": once})
        args = once
    # (Not weighed against a value this message replaces: "PayPal then" after the card was refused.)
    replaced = still_replaced(operations.values(), ctx.replaced, seen, ctx.message)
    unsaid = unnamed(operations[name], args, seen, ctx.user_texts, replaced)
    if unsaid:  # the customer's choice they have not made: asked for, not guessed
        step.setdefault("unnamed", []).append({"operation": name, "args": unsaid})
        args, dropped = {**args, **dict.fromkeys(unsaid)}, [*dropped, *unsaid]
    op = operations[name]
    return Step(operation=name, proposed_args=proposed, args=args, dropped=dropped, writes=bool(op.writes),
                description=op.description)


def _kept(ctx: TurnContext, name: str, proposed: dict[str, Any]) -> dict[str, Any] | None:
    """``proposed`` with the values of the call the last turn asked the customer to complete, where this is that call
    (its operation) and the value is not one the customer typed in this message; None when nothing changes. Told the
    payment method it had asked for, the 1.5B planned the exchange afresh and chose other items (train task 0, while
    swaps asked for it). Where the last turn asked about several calls of that operation, the values are those of the
    one sharing most of ``proposed``'s (two cancels asked their reason: each keeps its own order)."""
    last = ctx.history[-1] if ctx.history else None
    if last is None or not asked_for_value(last) or last.operation != name or not last.args:
        return None
    # Of a plan of several such calls ("cancel or return everything"), the one this is: the most values shared.
    asked = [x["args"] for s in (last.trace or {}).get("steps", []) for x in s.get("steps") or []
             if isinstance(x, dict) and x.get("operation") == name and x.get("args")]
    base = max([last.args, *asked], key=lambda a: sum(v is not None and a.get(k) == v for k, v in proposed.items()))
    def typed(value: Any) -> bool:
        return isinstance(value, str) and bool(token_spans(value, ctx.text, ignore_case=True))
    out = {k: v if base.get(k) is None or typed(v) else base[k] for k, v in proposed.items()}
    return out if out != proposed else None


def _near_kind(op: Operation, proposed: dict[str, Any], text: str) -> dict[str, Any] | None:
    """``proposed`` with an id the request types replaced by the one id of its shape that the sentences naming the
    write's kind type (``walk.near_word``); None when nothing changes, and for a look-up."""
    if not op.writes:
        return None
    out = {k: (near_word(text, op.kind, v) or v) if isinstance(v, str) else v for k, v in proposed.items()}
    return out if out != proposed else None


def of_the_other(operations: Mapping[str, Operation], calls: list[tuple[str, dict[str, Any]]], text: str,
                 step: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``calls``, where every write proposed is of a record ``text`` names only as the one whose value to take ("the
    same address as order #W…": ``walk.only_alike``), with each such write of the record the request does change
    (``walk.the_other``), before the repairs (the value is then taken from the source: ``completion.named_record``).
    Noted in ``step``. Told "for order #W…, change the address to be the same as order #W…", the 1.5B proposed the
    change of the cancelled source alone (train task 78)."""
    source = only_alike(text)
    writes = [(name, args) for name, args in calls if operations[name].writes]
    if not source or not writes or not all(_of_source(args, source) for _, args in writes):
        return calls
    out = []
    for name, args in calls:
        other = {k: (the_other(text, v) or v) if isinstance(v, str) else v for k, v in args.items()}
        if other != args:
            step.setdefault("of_the_other", []).append({"operation": name, "source": args, "args": other})
        out.append((name, other))
    return out


def not_of_sources(steps: list[Step], text: str, step: dict[str, Any]) -> list[Step]:
    """``steps`` without the writes of a record ``text`` names only as the one whose value to take ("the same address
    as order #W…": ``walk.only_alike``), where other steps remain (noted in ``step``). Told "for order #W…, change the
    address to be the same as order #W…", the 1.5B changed both orders' addresses, and the plan was refused with the
    cancelled one (train task 78)."""
    source = only_alike(text)
    sourced = [s for s in steps if s.writes and _of_source(s.args, source)]
    if not sourced or len(sourced) == len(steps):
        return steps
    step["source_only"] = [{"operation": s.operation, "args": s.args} for s in sourced]
    return [s for s in steps if s not in sourced]


def _of_source(args: dict[str, Any], source: set[str]) -> bool:
    """Whether ``args`` name a record of ``source`` (the ids a request names only as the one whose value to take)."""
    return any(str(v) in source for v in args.values())
