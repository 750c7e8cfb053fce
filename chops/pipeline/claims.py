"""Changes an answer says were made that nothing made: an answer is text, and text changes nothing. Asked to swap a
kettle, the 1.5B answered "The Electric Kettle in #W… is changed to a plastic silver variant"; asked to cancel the
order holding the sunglasses, "The order with the sunglasses in it has been cancelled" (it was pending, and stayed
so). The verifier passed both, and the customer, told it was done, never got the change (train tasks, our own
conversations)."""

from __future__ import annotations

import re
from chops.domain.operations import named
from chops.pipeline.context import Candidate, TurnContext
from chops.pipeline.lookups import seen_data
from chops.pipeline.walk import mentions, records

# A change said as done: "has been cancelled", "I've updated", "is now changed", "we swapped". "can be returned", "will
# be refunded", "once it's cancelled" say what may be, not what was. Group 1: the change's root.
_CLAIMED = re.compile(
    r"(?:'ve|\b(?:has|have|had|is|are|was|were|i|we))\s+(?:(?:been|now|already|successfully|just|also|all)\s+)*"
    r"(cancel|return|exchang|chang|modifi|updat|swap|replac|refund|switch|remov|add)(?:led|ped|ed|d)\b",
    re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n。！？]+")
_ROOT = 5  # letters of the root the request says the change by: "modif" of "modify" and "modified"


def claimed_changes(ctx: TurnContext, cand: Candidate) -> list[str]:
    """The changes (the words saying them) an answer says were made, of a kind the request asks for, that neither
    this conversation's commits (``TurnContext.done``), the guide excerpt, nor the records the claim's sentence names
    show: "it has been cancelled" stands where the order it names is cancelled ("cancel #W…" of an order cancelled last
    week), not where it is pending. A sentence naming no record is held against all that was read. A change the
    request does not ask for is a state reported ("your other order was returned"), not checked here."""
    if cand.operation is not None or not (answer := cand.answer or "").strip():
        return []
    done = " ".join([*ctx.done(), cand.source.text if cand.source is not None else ""])  # or the guides say so
    read = [node for data in seen_data(ctx, cand.lookups) for node in records(data)]
    out = []
    for sentence in _SENTENCE.findall(answer):
        for m in _CLAIMED.finditer(sentence):
            root = m.group(1).lower()[:_ROOT]
            if not named(root, ctx.text) or named(root, done):
                continue
            rest = sentence.replace(m.group(), " ")  # the claim's own words name no record ("cancelled")
            shown = [node for node in read if _named_by(rest, node)] or read  # naming none: all that was read
            if not any(named(root, value) for node in shown for value in _values(node)):
                out.append(m.group().strip())
    return list(dict.fromkeys(out))


def _values(node: dict) -> list[str]:
    """A record's own values, as text: its scalars and the scalars of its lists (an order's item names)."""
    out: list[str] = []
    for v in node.values():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, (str, int, float)) and not isinstance(x, bool):
                out.append(str(x))
    return out


def _named_by(sentence: str, node: dict) -> bool:
    """Whether ``sentence`` names the record ``node``: one of its ids (a value with a digit, typed whole) or names."""
    return any(v.casefold() in sentence.casefold() if any(c.isdigit() for c in v) else len(v) >= 4
               and mentions(sentence, v) for v in _values(node) if len(v) >= 4)
