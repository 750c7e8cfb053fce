"""What the customer said to do where a condition of theirs fails: "exchange it if it's under $200; if not, return it".

Told that the cheapest keyboard is over the $200 the customer set, and what they said for that case, the 1.5B model
wrote the refusal back to them and never proposed the return (train task 89). So the words for that case are found
(``otherwise``) and made a request of their own about what the refused write was about (``fallback``), which the agent
takes up instead (``chops.pipeline.tiers.redo``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.choices import record_arg
from chops.pipeline.each import asked_to_change
from chops.pipeline.swapped import LACK as _LACK
from chops.pipeline.walk import mentions, names_of, record_fields


# What the customer said to do where a condition of theirs fails: "if not, return it", "otherwise just cancel".
_OTHERWISE = re.compile(r"\b(?:if not|if it(?:'s| is)n'?t|if (?:that|this|it)(?:'s| is) not (?:possible|available|so)|"
                        r"if there(?:'s| is) (?:none|no such)|if (?:you|we|they) can(?:'?t|not)|"
                        # a variant named ("if there's no keyboard that is clicky, …, then"; ``swapped.unmet``)
                        rf"{_LACK}[^.;!?\n]*?,\s*then|{_LACK}[^,.;!?\n]+(?=,)|"
                        r"if [^,.;!?]{0,60}?(?:isn'?t|is not|aren'?t|are not) (?:possible|available)|"
                        r"otherwise|or else|failing that)\b[,:]?\s*[^.;!?\n]+", re.IGNORECASE)
# The condition before what to do: "if there's none in blue, (then) " or a bare "otherwise ".
_LEAD = re.compile(r"^if\b[^.;!?]*?,\s*then\b\s*|^if\b[^,:]*[,:]\s*"
                   r"|^(?:if not|otherwise|or else|failing that)\b[,:]?\s*", re.IGNORECASE)


# What to do that is only another value of the change ranked next ("if 8 bar isn't possible, 9 bar; if not, 7 bar"):
# a few words holding a number, which ``chops.pipeline.narrowing.preferred`` takes as alternatives.
_ALTERNATIVE = re.compile(r"^(?:then |maybe |perhaps )?(?:an? |the )?\S*\d\S*(?:\s+\S+)?$", re.IGNORECASE)


def otherwise(texts: Iterable[str]) -> str | None:
    """The customer's own words for what to do where the condition of a change fails ("if not, return it"), from
    the first of ``texts`` that has some (not an alternative value ranked next: ``_ALTERNATIVE``); else None."""
    return next((found.group(0).strip()[:160] for text in texts if (found := _for_failure(text))), None)


def _for_failure(text: str) -> re.Match | None:
    """The first words of ``text`` for what to do where a condition fails that are no alternative ranked next."""
    return next((m for m in _OTHERWISE.finditer(text)
                 if not _ALTERNATIVE.match(_LEAD.sub("", m.group(0).strip(), count=1).strip())), None)


def before_otherwise(text: str) -> str:
    """``text`` up to the customer's words for what to do where a condition fails ("my gift card; if that's not
    possible, my credit card" is "my gift card; ")."""
    found = _for_failure(text)
    return text[:found.start()] if found else text


def fallback(op: Operation, args: Mapping[str, Any], said: str, sources: Iterable[Any]) -> str:
    """The request the customer's words for a failed condition (``otherwise``) make of the write ``op`` with ``args``:
    "if not, I want to return my current one" of a keyboard becomes "I want to return my current one: the Mechanical
    Keyboard of #W0000000". Told the refusal and those words, the 1.5B replied with the refusal and never proposed the
    return (train task 89); the agent takes this request up instead (``tiers.redo``). Words that keep what the write
    was about ("keep the boots and return the rest") are about the rest: the request is the words alone."""
    keys, sources = op.choice_names(), list(sources)
    fields = record_fields(sources, set(keys.values()))
    names = sorted({str(n) for arg in op.choice_pairs() if arg in keys for v in args.get(arg) or ()
                    for n in names_of(fields[keys[arg]].get(str(v)))})
    record = args.get(record_arg(op) or "")
    wish = _LEAD.sub("", said, count=1).strip() or said
    wish = f"{wish[0].upper()}{wish[1:]}"
    if (spoken := [n for n in names if mentions(wish, n)]) and not any(asked_to_change(wish, n, ()) for n in spoken):
        # "keep the boots and cancel or return the rest": about the rest, not the boots' order (train task 54: the
        # request named the boots' order, and their swap was proposed again).
        return wish
    if spoken:  # "then only exchange the thermostat": of the record, as said
        names = []
    subject = ", ".join(names) + (f" of {record}" if record else "") if names else record
    return wish + (f": the {subject}" if names else f": {subject}" if subject else "")
