"""Options heard first: a swap whose new item the customer asked to choose from a list is asked about, not chosen.

"Exchange my kettle for a bigger one; if there are several, tell me the options and their prices first": the grammar
narrowed the kettle's variants to the one nearest the old line, the 1.5B proposed it, and the customer was asked to
confirm a choice they had asked to make themself (train task 29: the three shorter bamboo skateboards' prices were
never said). So where the request asks to hear the options (``asking.asks_options``) and more than one variant of a
product the write replaces fits what the customer said (``choices.fitting``), the write is not planned: the reply
lists those variants with their prices and asks which (``Which`` with ``listed``; the agent's own question,
``context.FINAL``).
The answer completes the request (``agenda.plan``), the write's other arguments are kept (``repairs._kept``), and the
grammar narrows by the answer ("the most expensive one", "the graphic one"). A product's options are listed once in a
conversation (``LISTED`` in the turn's trace): an answer that singles out none leaves the choice to the model, as
any request does, instead of the same list again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.asking import asks_options
from chops.pipeline.choices import fitting
from chops.pipeline.context import Step, TurnContext
from chops.pipeline.which import Which

LISTED = "listed"  # the trace key of the products whose options a turn listed
_MAX = 8  # options listed at most: more is no list a customer reads in a chat


def listed_first(operations: Mapping[str, Operation], writes: Iterable[Step], ctx: TurnContext,
                 sources: Iterable[Any]) -> tuple[Step, Which] | None:
    """The first of ``writes`` whose new item the customer asked to choose from a list, and the question listing the
    variants that fit (module docstring); None where the request asks for no list, every product has one variant
    that fits, or its options were listed before in this conversation. Noted in ``ctx``'s trace (``LISTED``)."""
    request = "\n".join(ctx.request_texts)
    if not asks_options(request):
        return None
    sources = list(sources)
    before = {name for turn in ctx.history for name in ((turn.trace or {}).get(LISTED) or ())}
    for s in writes:
        op = operations[s.operation]
        for name, fit in fitting(op, s.args, sources, ctx.user_texts).items():
            if len(fit.values) < 2 or name in before:
                continue
            ctx.trace.info.setdefault(LISTED, []).append(name)
            lines = fit.described[:_MAX]
            told = tuple(_told(line, lines, fit.places) for line in lines)
            return s, Which(name=name, options=told, unset=tuple(op.choice_described()), listed=True)
    return None


def _told(line: str, lines: list[str], places: list[str]) -> str:
    """A variant's ``line`` as the customer is told it: without the parts every listed line shares (a mark such as
    "available"), its features labelled by the ``places`` of the line replaced where the line lists them unlabelled
    ("steel, 1L; $40.00" -> "material: steel, capacity: 1L, $40.00")."""
    parts = [p.strip() for p in line.split(";")]
    shared = set(parts).intersection(*([q.strip() for q in other.split(";")] for other in lines)) \
        if len(lines) > 1 else set()
    out = []
    for part in (p for p in parts if p not in shared):
        values = [v.strip() for v in part.split(",")]
        plain = ":" not in part and len(values) == len(places) and not part.startswith("$")
        out.append(", ".join(f"{k}: {v}" for k, v in zip(places, values)) if plain else part)
    return ", ".join(out) or line
