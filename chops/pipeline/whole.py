"""A write of a whole record asked for a part of it: "cancel the skateboard in my pending order".

A shop cancels a pending order as a whole: there is no cancelling one of its items. Asked to "cancel just the garden
hose in the order I just placed", the 1.5B model proposed the order's cancel, and a customer who says yes to what they
think is the hose loses the whole order. So a write that takes a whole record (no argument lists its lines) is not
run where the request names products the record holds but not all of them, and says neither that it means the record
itself ("cancel my order", "the order with the skateboard", "the skateboard order", its id) nor that the whole of it
may go ("whole", "entire", "all", "everything"); a product named as not to change ("but keep the kettle") is none
asked for. The customer is told why, with what else the record holds, and decides: a request that said what to do in
that case ("if that's not possible, cancel the whole order") is taken up instead (``chops.pipeline.fallbacks``).
Customers asked so in 8 of the 74 train tasks of the shop (28, 31, 34, 57, 76, 81, 98, 99).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.choices import record_arg
from chops.pipeline.several import EVERY, EVERY_ZH, pattern
from chops.pipeline.unspoken import kept_out
from chops.pipeline.walk import mentions, names_of, record_fields

_WHOLE = pattern(EVERY, (*EVERY_ZH, "整个"))
_HOLDS = r"(?:with|containing|that (?:has|holds|contains)|holding)"  # "the order with …", "the one holding …"


def partial(op: Operation, args: Mapping[str, Any], request: str, sources: Iterable[Any],
            message: str | None = None) -> tuple[str, str] | None:
    """(the products ``request`` names, the others the record holds) where the write ``op`` with ``args`` takes the
    whole record and the request asks for a part of it (module docstring); else None. The ``message`` the request was
    split off may name the record itself: "Two changes to my order with the pet bed: please ship it to …" was split as
    "Ship the pet bed to …", and the address change was refused as the pet bed's alone (own7)."""
    keys, record = op.choice_names(), record_arg(op)
    if not op.writes or record is None or record not in keys or not isinstance(args.get(record), str):
        return None
    if any(isinstance(args.get(a), list) for a in keys if a != record):  # a write of the record's lines
        return None
    value, noun = args[record], re.escape(record.removesuffix("_id"))
    held = record_fields(sources, {keys[record]})[keys[record]].get(value)
    names = list(dict.fromkeys(str(n) for n in names_of(held)))
    asked = kept_out(request)  # "cancel the boots but keep the kettle" names the kettle as not to change
    named = [n for n in names if mentions(asked, n)]
    others = [n for n in names if n not in named]
    if not named or not others or _WHOLE.search(request) or value.lstrip("#").lower() in request.lower():
        return None
    kind = re.escape(op.kind)
    the_record = (rf"\b{kind}\W+(?:\w+\W+){{0,3}}?{noun}s?\b",  # "cancel my pending order"
                  rf"\b{noun}s?\W+{kind}",  # "or that order cancelled"
                  rf"\b{noun}s?\s+{_HOLDS}\b",  # "the order with the"
                  # "the one with the vacuum cleaner in it", after "which of my orders …?" (own7)
                  rf"\bthe one {_HOLDS}\b.*\bin it\b",
                  *(rf"\b{re.escape(n)}\s+{noun}\b" for n in named))  # "the skateboard order"
    if any(re.search(p, text, re.IGNORECASE) for p in the_record for text in (request, message or "")):
        return None
    return ", ".join(named), ", ".join(others)


def refusal_message(op: Operation, args: Mapping[str, Any], named: str, others: str) -> str:
    """What the customer is told: the write is of the whole record, which holds more than what they named."""
    record = record_arg(op) or ""
    noun = record.removesuffix("_id")
    return (f"{op.title or op.name} applies to the whole {noun}, not to single items: {args.get(record)} also holds "
            f"the {others}, so it cannot be done for the {named} alone")
