"""What a turn produces (``TurnResult``) and what a conversation remembers of it (``TurnRecord``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

# The conversational routes (greeting ... out_of_scope) get a fixed reply and call no executor; "handoff"
# also moves the conversation to staff (chops.conversation).
Route = Literal["basic_info", "guide", "system", "not_in_system", "greeting", "thanks", "cancel", "handoff",
                "out_of_scope"]
CONVERSATION_ROUTES = ("greeting", "thanks", "cancel", "handoff", "out_of_scope")
# The turn outcome of a request of several changes of which some were done (or queued) and others
# not; every other turn outcome is an ``chops.domain.outcomes.Outcome`` code.
PARTIAL = "partial"


class TurnRecord(BaseModel):
    """One earlier turn of a conversation, as stored in ``chops_turn``."""

    id: int | None = None
    conversation_id: str | None = None
    seq: int = 0
    created_at: datetime | None = None
    user_text: str
    reply: str | None = None
    route: str | None = None
    operation: str | None = None
    args: dict[str, Any] | None = None
    outcome: str | None = None
    committed: bool = False
    queued: bool = False
    trace: dict[str, Any] | None = None
    staff: str | None = Field(default=None, description="a staff member's message (``reply``): their display name")


class TurnResult(BaseModel):
    """The outcome of ``Agent.handle``: the reply and everything needed to audit it."""

    reply: str
    route: Route | None = None
    operation: str | None = None
    args: dict[str, Any] | None = None
    outcome: str | None = None
    committed: bool = False
    queued: bool = False
    approval_id: int | None = None
    steps: list[dict[str, Any]] = Field(default_factory=list, description="a plan's steps: operation, args, "
                                        "outcome (``operation``/``args`` above are the first step's)")
    pending: dict[str, Any] | None = Field(default=None, description="a change described to the user and waiting "
                                           "for their yes: id, operations, description, expires_at")
    iterations: int = 0
    chars_in: int = 0
    chars_out: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = Field(default=None, description="LLMError code when the model failed")
    trace: dict[str, Any] = Field(default_factory=dict)

    def to_record(self, user_text: str) -> TurnRecord:
        """This result as a ``TurnRecord`` (for callers that keep history in memory)."""
        return TurnRecord(user_text=user_text, reply=self.reply, route=self.route, operation=self.operation,
                          args=self.args, outcome=self.outcome, committed=self.committed, queued=self.queued,
                          trace=self.trace)


class Solution(BaseModel):
    """One remembered solution (``chops_solution``): what a later, similar request is shown.

    What it holds depends on the route, never personal data: a committed write's operation and
    arguments; a read's operation only (not its result); a guide answer with its source; for a
    profile answer the route alone."""

    id: int | None = None
    created_at: datetime | None = None
    request: str
    route: str
    operation: str | None = None
    args: dict[str, Any] | None = None
    answer: str | None = None
    source: str | None = None
    status: str = "live"
    deleted_at: datetime | None = None
    deleted_by: str | None = None
    similarity: float | None = Field(default=None, description="cosine to the request it was recalled for")
