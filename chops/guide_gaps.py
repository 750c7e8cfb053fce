"""Guide gaps: the guide questions the guides could not answer, grouped by meaning.

A guide-route answer is a gap when the verifier never passed it, or when it cites no guide excerpt
(the executor's ``source`` 0: "no excerpt answers it"). The questions are embedded with the
project's sentence embedder (USE by default) and grouped greedily: a question joins the group whose
centroid is the most similar, if the cosine similarity reaches ``SIMILARITY``; otherwise it starts a
group. No model call.
"""

from __future__ import annotations

from typing import Any, Protocol

import logging

import numpy as np
import sqlalchemy as sa

from chops import tables as t
from chops.retrieval.embedders import EmbedderError

log = logging.getLogger(__name__)

# Measured with USE multilingual v3: rewordings of one question score 0.65-0.8 (also across English and
# Chinese), different questions of the same domain 0.15-0.55.
SIMILARITY = 0.6
MAX_QUESTIONS = 500  # the newest gaps of a range are grouped; bounds the embedding work per request
MAX_GROUPS = 50
EXAMPLES = 3


class Embedder(Protocol):
    """``chops.retrieval.embedders.Embedder``: unit-length float32 rows."""

    def embed(self, texts: list[str]) -> np.ndarray:
        """One row per text."""
        ...


def gap_questions(engine: sa.Engine, turns: list[Any]) -> list[str]:
    """The questions of the guide-route agent turns (``chops.outcomes.TurnFacts``) that are gaps, oldest
    first; the cited source of verified answers is read from their traces in one query."""
    guide = sorted((tf for tf in turns if tf.route == "guide" and tf.question),
                   key=lambda tf: (tf.created_at, tf.id))[-MAX_QUESTIONS:]
    verified = [tf.id for tf in guide if tf.passed]
    steps = sa.type_coerce(t.turn.c.trace_json, sa.JSON)["steps"]
    cited: set[int] = set()
    if verified:
        with engine.connect() as conn:
            for turn_id, turn_steps in conn.execute(sa.select(t.turn.c.id, steps).where(t.turn.c.id.in_(verified))):
                answers = [s for s in turn_steps or [] if s.get("role") == "executor" and s.get("route") == "guide"]
                if answers and answers[-1].get("source"):
                    cited.add(turn_id)
    return [tf.question for tf in guide if tf.id not in cited]


def group_gaps(questions: list[str], embedder: Embedder | None, similarity: float = SIMILARITY) -> list[dict]:
    """Groups of questions, the most asked first: ``{"question", "count", "examples"}`` (the first
    wording asked, how many questions, up to ``EXAMPLES`` other distinct wordings). Without an embedder
    only identical wordings are grouped."""
    if not questions:
        return []
    labels = [questions.index(q) for q in questions]
    if embedder is not None:
        try:
            labels = cluster(np.asarray(embedder.embed(questions), dtype=np.float32), similarity)
        except EmbedderError:  # the figures still come; only the grouping falls back to identical wordings
            log.exception("guide gaps: the embedder failed; grouping identical questions only")
    groups: dict[int, dict] = {}
    for text, label in zip(questions, labels):
        group = groups.setdefault(label, {"question": text, "count": 0, "examples": []})
        group["count"] += 1
        if text != group["question"] and text not in group["examples"] and len(group["examples"]) < EXAMPLES:
            group["examples"].append(text)
    # sorted() is stable: groups asked equally often keep the order they were first asked in.
    return sorted(groups.values(), key=lambda g: -g["count"])[:MAX_GROUPS]


def cluster(vectors: np.ndarray, similarity: float) -> list[int]:
    """A group number per row (unit-length rows): each row joins the most similar group centroid when
    the cosine similarity reaches ``similarity``, else starts a new group."""
    sums = np.zeros_like(vectors)
    labels: list[int] = []
    groups = 0
    for row in vectors:
        if groups:
            centroids = sums[:groups] / np.maximum(np.linalg.norm(sums[:groups], axis=1, keepdims=True), 1e-12)
            sims = centroids @ row
            best = int(np.argmax(sims))
            if sims[best] >= similarity:
                sums[best] += row
                labels.append(best)
                continue
        sums[groups] = row
        labels.append(groups)
        groups += 1
    return labels
