"""The typed events of a turn: what the SSE relay streams and what metrics, the eval and the console
read from a stored trace (``trace["events"]``), instead of each parsing loosely shaped dicts.

``Trace.emit(name, payload)`` builds the event of kind ``name`` from ``payload`` (a missing or
mistyped field fails loudly in tests, not silently in a dashboard); the listener still gets
``(name, dict)``. ``delta`` events (streamed answer pieces) are relayed but not stored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class Event(BaseModel):
    """Fields every event has: its kind and the loop iteration it happened in (0 before the loop)."""

    model_config = ConfigDict(extra="forbid")
    kind: str
    iteration: int = 0


class Classify(Event):
    """The classifier chose a route."""

    kind: Literal["classify"] = "classify"
    route: str
    tier: str | None = None  # the classifier tier (model) that decided
    by: Literal["router", "model"] = "model"  # the embedding router (no model call) or the model classifier
    confidence: float | None = None  # the router's probability of its route, when it was asked


class Execute(Event):
    """The executor's proposal and its dry-run outcome (``operation`` None for an answer). For a plan
    ``operation``/``args``/``outcome`` are the first step's and ``steps`` lists every step's."""

    kind: Literal["execute"] = "execute"
    route: str | None = None
    operation: str | None = None
    args: dict[str, Any] | None = None
    outcome: str | None = None
    steps: list[dict[str, Any]] = []
    tier: str | None = None  # the executor tier (model) that proposed it
    check: str | None = None  # the deterministic check it failed (``chops.pipeline.tiers``), if any


class Verify(Event):
    """The verifier's verdict on this iteration's proposal."""

    kind: Literal["verify"] = "verify"
    score: float | None = None
    threshold: float | None = None
    passed: bool
    reason: str | None = None
    tier: str | None = None  # the verifier tier (model) that scored it


class Commit(Event):
    """A write was committed for real, or queued for staff instead."""

    kind: Literal["commit"] = "commit"
    operation: str
    committed: bool
    queued: bool
    outcome: str | None = None
    operations: list[str] = []  # every step of the plan committed or queued together


class Reply(Event):
    """The turn's reply and what it did."""

    kind: Literal["reply"] = "reply"
    reply: str
    route: str | None = None
    operation: str | None = None
    operations: list[str] = []  # every step of a plan (``operation`` is the first)
    outcome: str | None = None
    committed: bool = False
    queued: bool = False
    approval_id: int | None = None
    tier: str | None = None  # the executor tier of the answer given (EcoAssistant: who solved it)
    pending: int | None = None  # the change described and waiting for the user's yes (chops.pending)


class Escalate(Event):
    """The attempt was rejected: the next iteration asks every role one tier up."""

    kind: Literal["escalate"] = "escalate"
    tier: int  # the new tier index (0 = first)
    reason: str  # verifier, schema, grounding, refusal, no_source


class Recall(Event):
    """Solutions recalled from the memory for this turn, shown as demonstrations."""

    kind: Literal["recall"] = "recall"
    ids: list[int]
    similarities: list[float]


class Delta(Event):
    """A streamed piece of the answer's text."""

    kind: Literal["delta"] = "delta"
    text: str


EVENTS: dict[str, type[Event]] = {cls.model_fields["kind"].default: cls
                                  for cls in (Classify, Execute, Verify, Commit, Reply, Escalate, Recall, Delta)}


def make_event(name: str, payload: dict[str, Any]) -> Event:
    """The typed event of kind ``name``; ``ValueError`` for an unknown kind (pydantic's for bad fields)."""
    cls = EVENTS.get(name)
    if cls is None:
        raise ValueError(f"unknown trace event {name!r}; known: {', '.join(EVENTS)}")
    return cls(**payload)


def events_of(trace: Any, kind: type[Event]) -> list[Event]:
    """The stored events of one kind in a trace dict (``TurnResult.trace``), typed again."""
    stored = (trace or {}).get("events") or [] if isinstance(trace, dict) else []
    name = kind.model_fields["kind"].default
    return [kind(**e) for e in stored if isinstance(e, dict) and e.get("kind") == name]
