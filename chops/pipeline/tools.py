"""Tool retrieval: the operations most likely to serve a message, by embedding, so the executor is shown
(and its plan schema allows) a short list instead of the whole registry.

Each operation is embedded once, as its name in words plus its one-line description ("cancel pending
order: Cancel a pending order, …"), with the embedder the router and the guide index already hold (one
loaded model per process). A message is ranked by cosine similarity against those vectors. The previous
user message of the conversation counts too, with a smaller weight: a follow-up ("it's #W2378156", "the
card I paid with") says little about the operation on its own, while the message before it named it.

The short list is the ``top_k`` best operations plus every look-up they declare they need
(``Operation.needs``): a write whose ids come from a look-up (an order's item ids, a product's variants)
is useless without that look-up, and the look-up's own wording rarely resembles the customer's request.
The list keeps the registry's order, so the prompt reads like today's with lines left out.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from chops.domain.operations import Operation

# The weight of the previous user message's similarity (bench.tools measures the choice on the shop's
# scripted follow-ups: see README, "Tool retrieval").
PREVIOUS_WEIGHT = 0.5


def operation_text(op: Operation) -> str:
    """What is embedded for ``op``: its name split into words, then its description (USE reads words, and
    ``ChangeAllTypesUploadLimit`` or ``cancel_pending_order`` is one unknown token to it)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", op.name).replace("_", " ").lower()
    return f"{words}: {op.description}"


@dataclass(frozen=True)
class Ranked:
    """One ranking: every operation name, best first, with its score."""

    names: tuple[str, ...]
    scores: tuple[float, ...]


class ToolRanker:
    """Ranks a registry's operations against a message; ``shortlist`` is what the executor is shown."""

    def __init__(self, operations: Mapping[str, Operation], embedder, *, top_k: int,
                 previous_weight: float = PREVIOUS_WEIGHT) -> None:
        """``top_k``: how many ranked operations the short list takes before their look-ups (0: all of them,
        ``shortlist`` is then the whole registry and nothing is embedded)."""
        self.operations = dict(operations)
        self.embedder = embedder
        self.top_k = top_k
        self.previous_weight = previous_weight
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()
        unknown = {need for op in self.operations.values() for need in op.needs} - set(self.operations)
        if unknown:  # a pack's typo would silently drop the look-up it meant to keep
            raise ValueError(f"operations declare needs that are not operations: {', '.join(sorted(unknown))}")

    def vectors(self) -> np.ndarray:
        """The operations' unit vectors, in registry order (embedded on first use, once)."""
        if self._vectors is None:
            with self._lock:
                if self._vectors is None:
                    texts = [operation_text(op) for op in self.operations.values()]
                    self._vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
        return self._vectors

    def rank(self, text: str, previous: str | None = None) -> Ranked:
        """Every operation by similarity to ``text`` (plus ``previous_weight`` times the similarity to ``previous``,
        the user's message before it, when there is one), best first; ties keep registry order."""
        queries = [text] + ([previous] if previous and previous.strip() else [])
        q = np.asarray(self.embedder.embed(queries), dtype=np.float32)
        sims = self.vectors() @ q.T  # (operations, queries): the vectors are unit length, so cosine
        scores = sims[:, 0] + (self.previous_weight * sims[:, 1] if sims.shape[1] > 1 else 0.0)
        order = np.argsort(-scores, kind="stable")
        names = list(self.operations)
        return Ranked(names=tuple(names[i] for i in order), scores=tuple(round(float(scores[i]), 4) for i in order))

    def shortlist(self, text: str, previous: str | None = None) -> tuple[str, ...]:
        """The operations to show for ``text``: the ``top_k`` best and the look-ups they need, in registry
        order; with ``top_k`` 0 (or at least the registry's size), every operation."""
        if self.top_k <= 0 or self.top_k >= len(self.operations):
            return tuple(self.operations)
        return self.expand(self.rank(text, previous).names[:self.top_k])

    def expand(self, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` with the look-ups they declare (``Operation.needs``), and theirs in turn, in registry order."""
        keep: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop()
            if name not in keep:
                keep.add(name)
                todo.extend(self.operations[name].needs)
        return tuple(name for name in self.operations if name in keep)
