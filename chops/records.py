"""What a turn produces (``TurnResult``) and what a conversation remembers of it (``TurnRecord``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

Route = Literal["basic_info", "guide", "system", "not_in_system"]


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
                          args=self.args, outcome=self.outcome, committed=self.committed, queued=self.queued)
