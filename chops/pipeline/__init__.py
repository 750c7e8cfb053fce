"""The classifier–executor–verifier pipeline: ``Agent.handle`` turns one user message into a reply."""

from chops.pipeline.agent import Agent, idempotency_key
from chops.records import Route, TurnRecord, TurnResult
from chops.pipeline.verifier import threshold

__all__ = ["Agent", "Route", "TurnRecord", "TurnResult", "idempotency_key", "threshold"]
