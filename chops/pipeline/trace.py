"""The per-turn trace: every model call and decision as one structured record, plus progress events.

Model-call sizes come from the ``Ledger`` the seam fills (one ``CallRecord`` per attempt, retries
included), so the figures here are the same ones the eval and the console aggregate.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from chops.llm import Ledger
from chops.pipeline.events import Delta, Event, make_event

log = logging.getLogger(__name__)

EventSink = Callable[[str, dict], None]


class Trace:
    """Collects steps of one turn; ``emit`` forwards progress events to the caller (e.g. SSE)."""

    def __init__(self, on_event: EventSink | None = None) -> None:
        self.ledger = Ledger()
        self.steps: list[dict[str, Any]] = []
        self.events: list[Event] = []
        self.info: dict[str, Any] = {}
        self.iteration = 0
        self._on_event = on_event
        self._t0 = time.perf_counter()

    @property
    def listening(self) -> bool:
        """Whether someone receives progress events (worth streaming answers to)."""
        return self._on_event is not None

    def emit(self, name: str, payload: dict[str, Any]) -> None:
        """Record the typed event ``name`` (see ``chops.pipeline.events``) and send it to the listener;
        a failing listener must not break the user's turn."""
        event = make_event(name, {"iteration": self.iteration, **payload})
        if not isinstance(event, Delta):  # answer pieces are for the live stream; the reply holds the text
            self.events.append(event)
        if self._on_event is None:
            return
        try:
            self._on_event(name, event.model_dump(exclude={"kind"}))
        except Exception:  # noqa: BLE001 - the listener is someone else's code
            log.exception("on_event listener failed for %s", name)

    def call(self, role: str, fn: Callable[[Ledger], Any], **info: Any) -> tuple[Any, dict[str, Any]]:
        """Run one model call ``fn(ledger)``; record its step (also when it raises) and return both."""
        before = len(self.ledger)
        step: dict[str, Any] = {"iteration": self.iteration, "role": role, **info}
        self.steps.append(step)
        try:
            result = fn(self.ledger)
        finally:
            recs = self.ledger.records[before:]
            step.update(
                model=recs[-1].model if recs else None,
                tier=recs[-1].tier if recs else None,
                prompt_chars=sum(r.chars_in for r in recs),
                completion_chars=sum(r.chars_out for r in recs),
                prompt_tokens=sum(r.prompt_tokens or 0 for r in recs),
                # Of those, read from the engine's prompt cache (the slot's KV cache), when it says so.
                cached_tokens=sum(r.cached_tokens or 0 for r in recs),
                completion_tokens=sum(r.completion_tokens or 0 for r in recs),
                latency_s=round(sum(r.latency_s for r in recs), 4),
                cost_usd=sum(r.cost_usd for r in recs),
                attempts=len(recs),
                error=next((r.error for r in reversed(recs) if r.error), None),
            )
        return result, step

    def step(self, role: str, **info: Any) -> dict[str, Any]:
        """Record a step that is not a model call (retrieval, dry run, commit, queue)."""
        step = {"iteration": self.iteration, "role": role, **info}
        self.steps.append(step)
        return step

    def elapsed(self) -> float:
        """Seconds since the turn started."""
        return time.perf_counter() - self._t0

    def totals(self) -> dict[str, Any]:
        """Model-call sums of this turn (calls, chars, tokens, cost, latency)."""
        return self.ledger.totals()

    def to_dict(self) -> dict[str, Any]:
        """The whole trace as a JSON-ready dict."""
        return {
            **self.info,
            "steps": self.steps,
            "events": [e.model_dump() for e in self.events],
            "totals": self.totals(),
            "by_role": self.ledger.by_role(),
            "ledger": [r.model_dump() for r in self.ledger.records],
            "latency_s": round(self.elapsed(), 4),
        }
