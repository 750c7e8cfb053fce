"""Everything the customer can: "cancel or return everything I can, except my boots".

Such a request names no record and no line: it is about every record a named write can take. Asked so, the 1.5B
proposed the one write the message also spoke of (the boots' exchange, refused), and with the customer's fallback
("keep the boots and cancel or return the rest") as the request it proposed that exchange again or wrote the refusal
back; nothing was cancelled or returned (train task 54). The plan is made here instead, from the data: for each
record in a state a named write takes (a pending order for the cancel, a delivered one for the return), that write,
the first named that takes it; a write of lines takes every line but those of the products the customer keeps
("except my boots", "keep the boots": ``unspoken.kept_out``), a write of the whole record no record holding one of
them, and no write a record whose every line is kept. Its other arguments: a record's own value (``CHOICES_ORIGINAL``:
the refund to the order's original payment method) and a value among those the pack lists (``CHOICES_AMONG``: a
cancel's reason) that the customer's words name, else none: the calls lacking it are asked about first, alone (the
next turn, with the answer, makes the whole plan).
The plan then goes the way of every plan: repaired, dry-run, verified, described and confirmed.

"Asks for everything" is a sentence naming two or more such writes with a word that takes in every record ("cancel
or return everything", "… the rest", "… all my orders"), or one such write with "I can" or "possible" ("return
everything I can"); not where a typed id names the record, nor where the request names another kind of write too
(its own plan comes first: the fallback is the request once that is refused), nor where a clause narrows it
("everything I bought that's not for gaming", "everything from my last order": ``together.all_but`` takes one
record's lines).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, get_origin

from chops.domain.operations import MAX_PLAN_STEPS, Operation
from chops.pipeline.choices import in_state, lines_of, record_arg
from chops.pipeline.completion import own_value, unnamed
from chops.pipeline.lookups import Reader
from chops.pipeline.unspoken import kept_out
from chops.pipeline.walk import SENTENCE, mentions, names_of, record_fields, typed_ids

_CAN = r"(?:(?:that|which)\s+)?(?:i|you|we)\s+(?:can|could)|(?:that(?:'s| is)\s+)?possible"
# What takes in every record, then nothing that narrows it: the sentence ends, or an exception or "and" follows.
_EVERY = re.compile(rf"\b(?:the rest|(?:everything|anything|whatever|all(?: of)?(?: my| the)? (?:orders|purchases|"
                    rf"items|things|stuff))(?:\s+(?P<can>{_CAN}))?|all\s+(?P<all_can>{_CAN}))"
                    r"(?=\s*(?:$|[,.;:!?]|(?:except|but|other than|apart from|besides|save for|please|now|then|too|"
                    r"and)\b))", re.IGNORECASE)


def _line_args(op: Operation) -> list[str]:
    """The arguments of ``op`` that list its record's lines (a return's item ids): lists whose values the look-ups
    give, other than the record's own values."""
    fields = {field.alias or name: field for name, field in op.args_model.model_fields.items()}
    return [k for k in op.choice_keys() if k != record_arg(op) and k not in op.choice_original()
            and k in fields and get_origin(fields[k].annotation) is list]


def takes_everything(op: Operation) -> bool:
    """Whether a plan of every record can make ``op`` without the model: a write of a record in some state whose other
    arguments are that record's lines, its own values, values among the pack's (``CHOICES_AMONG``) or optional; no
    swap (its new items are the customer's choice), no address (the customer's words)."""
    arg = record_arg(op)
    if not op.writes or arg is None or op.choice_pairs():
        return False
    given = {arg, *_line_args(op), *op.choice_original(), *op.choice_among()}
    return all((field.alias or name) in given or not field.is_required()
               for name, field in op.args_model.model_fields.items())


def asked_everything(operations: Iterable[Operation], text: str) -> list[Operation]:
    """The writes ``text`` asks to make of every record they can take (module docstring), in the order the pack lists
    them; [] where it asks for no such thing."""
    writes = [op for op in operations if op.writes and record_arg(op) is not None]
    if typed_ids([text]):
        return []
    for sentence in SENTENCE.split(text):
        found = _EVERY.search(sentence)
        named = [op for op in writes if op.named_in(sentence)]
        if found is None or not named or not all(takes_everything(op) for op in named):
            continue
        kinds = {op.kind for op in named}
        if len(kinds) < 2 and not (found["can"] or found["all_can"]):
            continue
        if any(op.named_in(text) and op.kind not in kinds for op in writes):  # another kind of write asked too
            return []
        return named
    return []


def kept(text: str, names: Iterable[str]) -> set[str]:
    """The ``names`` that ``text`` keeps out ("except my boots", "keep the boots"): mentioned, but not once their
    phrases are blanked (``unspoken.kept_out``)."""
    left = kept_out(text)
    return {n for n in names if mentions(text, n) and not mentions(left, n)}


def everything(operations: Mapping[str, Operation], text: str, texts: list[str], barred: set[str],
               read: Reader) -> list[tuple[str, dict[str, Any]]]:
    """The plan of every record the request ``text`` asks to change (module docstring): ``(operation, args)`` calls,
    at most ``MAX_PLAN_STEPS``; [] where it asks for no such thing. ``texts``: the customer's words, which name a
    value among the pack's; ``barred``: operations not to propose this turn; ``read`` looks up a record whose lines
    are not known yet (into its ``sources``)."""
    named = [op for op in asked_everything(operations.values(), text) if op.name not in barred]
    calls: list[tuple[str, dict[str, Any]]] = []
    taken: set[str] = set()
    for op in named:
        among = _named_among(op, read.sources, texts)  # the same for every record
        for record in in_state(op, read.sources):
            if record in taken or len(calls) >= MAX_PLAN_STEPS:
                continue
            args = _args(op, record, text, read)
            if args is not None:
                calls.append((op.name, {**args, **among}))
                taken.add(record)
    # A value nobody named is asked for first, the plan waiting for it: asked beside the rest described, a yes
    # would commit the rest alone.
    unsaid = [(name, args) for name, args in calls
              if any(args.get(key) is None for key in operations[name].choice_among())]
    return unsaid or calls


def _named_among(op: Operation, sources: list[Any], texts: list[str]) -> dict[str, str | None]:
    """Each ``CHOICES_AMONG`` argument of ``op``: the one of its values the customer's ``texts`` name
    (``completion.unnamed``), or None where they name none or several (it is asked for)."""
    out: dict[str, str | None] = {}
    for key, values in op.choice_among().items():
        said = [v for v in values if not unnamed(op, {key: v}, sources, texts)]
        out[key] = said[0] if len(said) == 1 else None
    return out


def _args(op: Operation, record: str, text: str, read: Reader) -> dict[str, Any] | None:
    """``op``'s arguments for ``record`` but the values among the pack's: every line but those kept, its own values;
    None where nothing of it is to change."""
    arg, names, listed = record_arg(op), op.choice_names(), _line_args(op)
    if any(key not in lines_of(op, record, read.sources) for key in listed):  # its lines are not known yet
        read.record(op, arg, record)
    sources = read.sources
    lines = lines_of(op, record, sources)
    fields = record_fields(sources, {names[k] for k in (arg, *listed) if k in names})
    args: dict[str, Any] = {arg: record}
    for key in listed:
        held = fields.get(names.get(key, ""), {})
        out = kept(text, {str(n) for line in lines.get(key, []) for n in names_of(held.get(line))})
        args[key] = [line for line in lines.get(key, []) if not {str(n) for n in names_of(held.get(line))} & out]
        if not args[key]:
            return None
    whole = names_of(fields[names[arg]].get(record)) if arg in names else []
    if not listed and kept(text, map(str, whole)):  # a whole record holding what the customer keeps
        return None
    for key in op.choice_original():
        args[key] = own_value(op, key, record, sources)
    return args
