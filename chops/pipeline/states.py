"""The states a write takes: a record's state, as the look-ups show it, decides which operation a change is
(``counterpart``: a pending order's item change, for a delivered order, is its exchange), whether the write can be
done at all (``out_of_state``), which records a look-up for a kind of write reads (``in_asked_states``) and which a
write may take where the request names their state (``in_named_states``); all from the operation's ``CHOICES_WHERE``
declaration. And a write of a record the request types the id of goes to the operation that takes it
(``other_record``: an order's address, not the default one)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from chops.domain.operations import Operation, named as named_kind, named_at
from chops.domain.outcomes import Outcome, OperationResult
from chops.pipeline.walk import mentions, names_of, only_alike, record_fields, typed_ids, values_in


def counterpart(op: Operation, args: dict[str, Any], sources: Iterable[Any]) -> str | None:
    """The operation to run instead of ``op`` for ``args``, when the record an argument names is in a state ``op``
    does not take (``CHOICES_WHERE``) and ``op`` names the operation for that state (``Operation.counterparts``):
    an item change proposed for a delivered order is that order's exchange. None: ``op`` itself."""
    for _, _, state, allowed in _states(op, args, sources):
        instead = dict(op.counterparts).get(state) if state not in allowed else None
        if instead is not None:
            return instead
    return None


def out_of_state(op: Operation, args: dict[str, Any], sources: Iterable[Any], operations: Iterable[Operation] = (),
                 request: str = "", said: str = "") -> OperationResult | None:
    """The platform's refusal, said before it is asked, where a record an argument names is, as the look-ups show it,
    in a state ``op`` does not take (checked after ``counterpart`` has switched what it could). Told "cancel or return
    everything", the 1.5B proposed each delivered order's cancel, whose reason the customer was then asked for, turn
    after turn (train task 13). Else None. Its data's ``instead`` names the write of ``operations`` that the
    ``request`` names too (its kind: "return" in "cancel or return") and that takes the record in that state: the
    request asked for it, so the plan is redone (``tiers.refused_plan``) even where no look-up was made. So too one
    the request asks for by saying the record is in that state (``Operation.asked_as``): "cancel the bookshelf I
    received" of a delivered order asks for its return (train task 104), where "cancel #W…, I changed my mind" is
    refused with the reason. That saying may be in the customer's own words the request was split from (``said``):
    "cancel the bookshelf and the jigsaw I received" came back from the split as "Cancel the bookshelf and the jigsaw
    from the same order" (train task 103)."""
    sources, operations = list(sources), list(operations)
    kinds_said = without_states(request, operations, sources)  # "my cancelled order" asks for no cancel
    for (arg, key), value, state, allowed in _states(op, args, sources):
        if state is not None and state not in allowed:
            other = next((w.name for w in operations if w.name != op.name and w.writes
                          and (any(named_kind(word, kinds_said) for word in w.kind_words)
                               or any(named_kind(word, f"{request} {said}") for word in w.asked_as))
                          and _takes(w, set(op.choice_keys().get(arg, ())), key, state)), None)
            # "pending (item modified)" is not "pending": said so, the refusal does not read as a contradiction.
            narrower = any(state.startswith(f"{a} (") for a in allowed)
            return OperationResult(operation=op.name, outcome=Outcome.REFUSED_PRECONDITION,
                                   message=f"{value} is {state}; this can only be done while it is "
                                           f"{' or '.join(allowed)}{f', not {state}' if narrower else ''}",
                                   data={"instead": other} if other else None)
    return None


def other_record(op: Operation, args: dict[str, Any], sources: Iterable[Any], operations: Iterable[Operation],
                 request: str) -> OperationResult | None:
    """A refusal of the write ``op`` where the ``request`` types the id of a record of the customer's that ``op`` takes
    none of, and a write of the same kind with a word of ``op``'s name beside it (``modify`` … ``address``) takes
    that record, where the request does not ask for ``op``'s as the customer's own ("my address"): its data's
    ``instead`` names that write, and the plan is redone (``tiers.refused_plan``). Told "for order #W…, change the
    address to be the same as order #W…", the 1.5B proposed the customer's default address change (train task 78).
    Else None."""
    # The ids typed as the record to change, not only as the one whose value to take ("the same as order #W…").
    sources = list(sources)
    typed = {t.casefold() for t in typed_ids([request])} - {t.casefold() for t in only_alike(request)}
    mine = {frozenset(paths) for paths in op.choice_keys().values()}
    for other in operations:
        shared = (set(other.words) & set(op.words)) - {op.kind}  # "address"
        if other.name == op.name or not other.writes or other.kind != op.kind or not shared \
                or any(re.search(rf"\bmy\s+(?:[^\W\d_]+\s+)?{w}", request, re.IGNORECASE) for w in shared):
            continue  # not a write like it, or one the request asks for as the customer's own ("my address")
        for arg, paths in other.choice_keys().items():
            said = [v for v in values_in(sources, paths) if str(v).casefold() in typed]
            if said and frozenset(paths) not in mine:
                return OperationResult(operation=op.name, outcome=Outcome.REFUSED_INVALID_ARG,
                                       message=f"you named {said[0]}, and this does not change it",
                                       data={"instead": other.name})
    return None


def _takes(op: Operation, paths: set[str], key: str, state: str) -> bool:
    """Whether ``op`` takes a record of those ``paths`` (``CHOICES_FROM``) whose ``key`` is in ``state``."""
    return any(set(op.choice_keys().get(arg, ())) == paths and state in where.get(key, ())
               for arg, where in op.choice_states().items())


def _states(op: Operation, args: dict[str, Any],
            sources: Iterable[Any]) -> Iterator[tuple[tuple[str, str], Any, str | None, tuple[str, ...]]]:
    """((the argument, the state's key), the value, the state the look-ups show, the states ``op`` takes) of each
    record an argument names (``CHOICES_WHERE``)."""
    states = op.choice_states()
    fields = record_fields(list(sources), {key for where in states.values() for key in where})
    for arg, where in states.items():
        for key, allowed in where.items():
            yield (arg, key), args.get(arg), fields[key].get(str(args.get(arg))), allowed


def in_named_states(op: Operation, arg: str, values: list[str], sources: list[Any], message: str) -> list[str]:
    """The write ``op``'s record ``values`` narrowed to those in a state it takes (``CHOICES_WHERE``) that the
    ``message`` names ("pending" of "pending (item modified)" too), where some are: told "… and send my pending order
    there too", the 1.5B proposed the address change of a cancelled order (our own conversations)."""
    named_states = {key: {s for s in states if named_kind(s.split(" (")[0], message)}
                    for key, states in op.choice_states().get(arg, {}).items()}
    named_states = {key: states for key, states in named_states.items() if states}
    if not named_states:
        return values
    fields = record_fields(sources, set(named_states))
    return [v for v in values if all(fields[k].get(str(v)) in states for k, states in named_states.items())] or values


def in_asked_states(op: Operation, arg: str, values: list[str], operations: Iterable[Operation],
                    sources: list[Any], message: str) -> list[str]:
    """A look-up's ``values`` narrowed to the records in a state that a write of a kind the ``message`` names takes
    (``CHOICES_WHERE`` of an argument with the same ``CHOICES_FROM``), where some are: "return the watch I received"
    reads the delivered order holding a watch, not the pending one (train task 16). Not for a swap's kind, whose
    counterpart takes the other state ("exchange" is said of a pending order's item change too). A state the message
    names that some of the records are in comes first (``in_said_state``): asked "what's the tracking number of my
    cancelled order?", the "cancel" in "cancelled" offered the pending orders alone, and the 1.5B read one (train task
    104).
    Unless a thing is said to be held as a write takes it (``_held_as``): told "exchange the garden hose I received for
    the same type as the one in my pending order", the 1.5B, offered the pending order alone, changed its hose (train
    task 29)."""
    paths, operations = set(op.choice_keys().get(arg, ())), list(operations)
    stated = in_said_state(paths, operations, sources, message)
    if stated:  # "the tracking number of my cancelled order": a state said is no kind of write asked for
        # unless a thing is said held as a write takes it: "exchange the hose I got for the one in my pending order"
        held = _held_as(op, arg, paths, operations, sources, message)
        return [v for v in values if v in (held or stated)] or values
    allowed: dict[str, set[str]] = {}
    message = without_states(message, operations, sources)
    for write in operations:
        if write.writes and not write.choice_pairs() and write.named_in(message):
            for key_arg, where in write.choice_states().items():
                if set(write.choice_keys().get(key_arg, ())) == paths:
                    for key, states in where.items():
                        allowed.setdefault(key, set()).update(states)
    if not allowed:
        return values
    fields = record_fields(sources, set(allowed))
    return [v for v in values if all(fields[k].get(str(v)) in states for k, states in allowed.items())] or values


# Words between a thing's name and the word that says it is held ("the lamp that I received", "the hose I just got").
_HELD_BY = {"i", "we", "i've", "we've", "that", "which", "just", "already", "recently", "finally", "have", "had", "has"}


def _held_as(op: Operation, arg: str, paths: set[str], operations: list[Operation], sources: list[Any],
             message: str) -> set[str]:
    """The records of ``paths`` holding a thing (by the look-up's ``CHOICES_MENTIONED`` names) that the ``message``
    says is held in a way a write asks for (``Operation.asked_as``: "the lamp I received"), in a state that write takes;
    not a question of its state ("has my watch been delivered?")."""
    key = op.choice_names().get(arg)
    if key is None:
        return set()
    names = record_fields(sources, {key})[key]
    out: set[str] = set()
    for write in operations:
        where = next((w for a, w in write.choice_states().items() if set(write.choice_keys().get(a, ())) == paths), {})
        if not write.writes or not where:
            continue
        states = record_fields(sources, set(where))
        for at in (at for word in write.asked_as for at in named_at(word, message)):
            before = re.split(r"[,;:.!?]", message[:at])[-1].split()
            while before and before[-1].lower() in _HELD_BY:
                before.pop()
            if before:  # the thing's own name ends right there: "the hose I got"
                out |= {rid for rid, held in names.items() if any(mentions(before[-1], str(n)) for n in names_of(held))
                        and all(states[k].get(rid) in allowed for k, allowed in where.items())}
    return out


def in_said_state(paths: set[str], operations: list[Operation], sources: list[Any], message: str) -> set[str]:
    """The records (of ``paths``: ``CHOICES_FROM``) in a state the ``message`` names after a determiner ("my cancelled
    order", "the pending one", and "pending" of "pending (item modified)" too; not "has it been delivered?"), of the
    state keys the writes taking such records declare (``CHOICES_WHERE``)."""
    keys = {key for write in operations if write.writes for key_arg, where in write.choice_states().items()
            if set(write.choice_keys().get(key_arg, ())) == paths for key in where}
    fields = record_fields(sources, keys)
    return {rid for key in keys for rid, state in fields[key].items()
            if isinstance(state, str) and re.search(_said_state(state), message, re.IGNORECASE)}


def _said_state(state: str) -> str:
    """The pattern of ``state`` said after a determiner ("my cancelled", "the pending" of "pending (item modified)")."""
    return r"\b(?:my|the|your|a|an|that|this|those|these|its|their)\s+" + re.escape(state.split(" (")[0]) + r"\b"


def without_states(text: str, operations: Iterable[Operation], sources: list[Any]) -> str:
    """``text`` without the states of records said after a determiner (those the ``operations`` take, and those the
    records in ``sources`` are in, of the keys of their ``CHOICES_WHERE``): "my cancelled order" names an order by its
    state and asks for no cancel ("what's the tracking number of my cancelled order?" was redone as a cancel of the
    pending order: train task 103), where "have it cancelled" asks for one."""
    wheres = [where for op in operations for where in op.choice_states().values()]
    fields = record_fields(sources, {key for where in wheres for key in where})
    states = {str(s).split(" (")[0] for where in wheres for values in where.values() for s in values} \
        | {str(s).split(" (")[0] for values in fields.values() for s in values.values() if isinstance(s, str)}
    for state in sorted(states, key=len, reverse=True):
        text = re.sub(_said_state(state), lambda m: m.group(0)[:-len(state)], text, flags=re.IGNORECASE)
    return text
