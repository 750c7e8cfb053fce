"""Changes an answer says were made that nothing made: an answer is text, and text changes nothing. Asked to swap a
kettle, the 1.5B answered "The Electric Kettle in #W… is changed to a plastic silver variant", and asked about a
tablet, "The tablet is already returned" (the sneakers were); the verifier passed both and the customer, told it was
done, never got the change (stop 52's conversations)."""

from __future__ import annotations

import re

from chops.domain.operations import named
from chops.pipeline.context import Candidate, TurnContext, dumps
from chops.pipeline.lookups import results

# A change said as done: "has been cancelled", "I've updated", "is now changed", "we swapped". Its root (group 1) is
# looked for in what the answer was given: "your order was cancelled" is so where a look-up shows a cancelled order.
# "can be returned", "will be refunded", "once it's cancelled" say what may be, not what was.
_CLAIMED = re.compile(
    r"(?:'ve|\b(?:has|have|had|is|are|was|were|i|we))\s+(?:(?:been|now|already|successfully|just|also|all)\s+)*"
    r"(cancel|return|exchang|chang|modifi|updat|swap|replac|refund|switch|remov|add)(?:led|ped|ed|d)\b",
    re.IGNORECASE)


def claimed_changes(ctx: TurnContext, cand: Candidate) -> list[str]:
    """The changes (the words saying them) an answer says were made where nothing it was given names that kind of
    change: not what this conversation's commits did (``TurnContext.done``), not the look-ups' results, the profile
    or the guide excerpt (a record's state: "cancelled", "return requested"). The customer's own words do not count:
    "exchange my kettle" makes no "your kettle has been exchanged" true."""
    if cand.operation is not None or not (cand.answer or "").strip():
        return []
    given = " ".join([ctx.profile_text(), cand.source.text if cand.source is not None else "",
                      dumps(results(cand.lookups)), *ctx.done()])
    return list(dict.fromkeys(m.group().strip() for m in _CLAIMED.finditer(cand.answer or "")
                              if not named(m.group(1).lower(), given)))
