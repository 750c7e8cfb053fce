"""Bodies of the JSON API as pydantic models: they validate requests and generate the OpenAPI spec."""

from __future__ import annotations

from copy import copy
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from chops.tables import RATING_COMMENT_MAX
from chops.records import TurnRecord
from chops.web.errors import ApiError

NICKNAME_MAX = 64  # the width of the nickname columns


class CreateConversation(BaseModel):
    """Start a conversation as the user in ``token`` (or, in demo mode only, as ``nickname``)."""

    model_config = ConfigDict(extra="forbid")
    token: str | None = Field(None, min_length=1, description="the user's JWT signed by the host site (sub = nickname, exp)")
    nickname: str | None = Field(None, min_length=1, max_length=NICKNAME_MAX,
                                 description="demo mode only: act as this user without a token")


class ConversationCreated(BaseModel):
    """A new conversation and the token that authorises its follow-up calls."""

    id: str = Field(description="conversation id")
    nickname: str
    token: str = Field(description="send as `Authorization: Bearer <token>` on follow-up calls")
    expires_at: int = Field(description="unix time when the conversation token expires")


class PostMessage(BaseModel):
    """One user message. Its length limit is the setting ``max_message_chars`` (default 2000)."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, description="the user's message (at most max_message_chars characters)")


def _record_fields(*names: str) -> type[BaseModel]:
    """A base model with the stored ``TurnRecord``'s own definitions of ``names`` (one source for their
    types and defaults; the record's ``trace`` and ids stay out of the public body)."""
    fields = TurnRecord.model_fields
    return create_model("TurnRecordFields", **{n: (fields[n].annotation, copy(fields[n])) for n in names})


class TurnOut(_record_fields("created_at", "user_text", "reply", "route", "operation", "args")):
    """One answered message as the user sees it (staff see the full trace in the console)."""

    turn_id: int | None = None
    seq: int
    outcome: str | None = Field(None, description="the operation outcome (ok, ok_noop, refused_*, not_in_system; "
                                                  "partial: some changes of a several-part request were done)")
    committed: bool = Field(False, description="a write was carried out")
    queued: bool = Field(False, description="the write waits for staff approval")
    approval_id: int | None = None
    pending: dict[str, Any] | None = Field(None, description="a change described and waiting for the user's yes "
                                           "(id, operations, description, expires_at): the widget shows Confirm and "
                                           "Cancel; the next message decides it")
    error: str | None = Field(None, description="the model error code when the model failed")


class GreetingOut(BaseModel):
    """The agent's opening line: the agent speaks first."""

    greeting: str
    language: Literal["en", "zh"]


class StateOut(BaseModel):
    """Who has the conversation: the agent, nobody yet (waiting for a person), a staff member, or closed."""

    state: Literal["agent", "waiting", "staff", "closed"]
    staff: str | None = Field(None, description="the staff member handling it (state staff)")
    changed_at: datetime | None = None
    staff_online: bool = Field(description="a staff member was active recently (else: a person answers later)")


class EventOut(BaseModel):
    """One event of the conversation's log (the events stream's data, the history's messages)."""

    model_config = ConfigDict(populate_by_name=True)
    id: int = Field(description="increasing; send the last one seen as Last-Event-ID to resume")
    kind: Literal["turn", "user", "staff", "state"]
    created_at: datetime
    actor: str = Field(description="the user's nickname, the staff member's name, or 'agent'")
    text: str | None = Field(None, description="user and staff messages")
    display_name: str | None = Field(None, description="the staff member's name as shown to the user")
    from_: str | None = Field(None, alias="from", description="state changes: the previous state")
    to: str | None = Field(None, description="state changes: the new state")
    turn: TurnOut | None = Field(None, description="kind turn: the answered turn")


class HeldMessage(BaseModel):
    """202: staff have the conversation; the message was stored for them and no model was called."""

    handled_by: Literal["staff"]
    event: EventOut
    state: StateOut


class ConversationOut(BaseModel):
    """A conversation with its turns, oldest first, its state and the messages exchanged with staff."""

    id: str
    nickname: str
    channel: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    state: StateOut
    turns: list[TurnOut]
    messages: list[EventOut] = Field(description="user messages held for staff and staff replies, oldest first")


class QueueItemOut(BaseModel):
    """A conversation in the staff queue."""

    conversation_id: str
    nickname: str
    state: str
    staff: str | None = None
    since: datetime = Field(description="when it entered this state")
    wait_seconds: float
    language: str = Field(description="the user's language (en, zh)")
    wants: list[str] = Field(description="the user's latest requests")
    tried: list[dict[str, Any]] = Field(description="what the agent did: route, operation, outcome, verifier verdict")
    summary: str


class QueueOut(BaseModel):
    """The staff queue of one state, longest waiting first."""

    state: str
    conversations: list[QueueItemOut]


class StaffStateOut(StateOut):
    """The state after a staff action."""

    conversation_id: str


class ErrorDetail(BaseModel):
    """A stable machine-readable ``code`` and a message for people."""

    code: str
    message: str


class ErrorBody(BaseModel):
    """Every 4xx/5xx body."""

    error: ErrorDetail


def parse_body(model: type[BaseModel], data: Any) -> BaseModel:
    """Validate ``data`` against ``model``; a failure is ``missing_field`` or ``invalid_field`` (400)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "(body)"
        if err["type"] == "missing":
            raise ApiError(400, "missing_field", f"the field {loc!r} is required", field=loc) from None
        raise ApiError(400, "invalid_field", f"the field {loc!r} is invalid: {err['msg']}", field=loc) from None


class RateTurn(BaseModel):
    """The user's rating of one agent answer; rating it again replaces the earlier rating."""

    model_config = ConfigDict(extra="forbid")
    thumbs: Literal["up", "down"] = Field(description="up = the answer helped, down = it did not")
    comment: str | None = Field(None, max_length=RATING_COMMENT_MAX,
                                description=f"optional, at most {RATING_COMMENT_MAX} characters")


class RatingOut(BaseModel):
    """The stored rating."""

    turn_id: int
    thumbs: Literal["up", "down"]
    comment: str | None = None


class GuideGap(BaseModel):
    """Guide questions the guides could not answer, grouped by meaning."""

    question: str = Field(description="the group's first wording")
    count: int = Field(description="questions in the group")
    examples: list[str] = Field(description="up to 3 other wordings")


class AnalyticsOut(BaseModel):
    """Figures over the conversations started from ``from`` to ``to`` (both days included, UTC).
    Rates are 0..1 over the counted conversations (``thumbs_up_rate``: over rated answers); null when
    there is nothing to count. README "Outcomes and analytics" defines each."""

    model_config = ConfigDict(populate_by_name=True)
    from_: date = Field(alias="from")
    to: date
    conversations: int
    auto_resolution_rate: float | None
    handoff_rate: float | None
    thumbs_up_rate: float | None
    reply_seconds_p50: float | None = Field(description="the agent's time to answer a message, median")
    reply_seconds_p95: float | None
    cost_per_conversation: float | None = Field(description="model cost in USD")
    outcomes: dict[str, int] = Field(description="resolved_by_agent, resolved_by_staff, abandoned, failed, waiting")
    ratings: dict[str, int] = Field(description="up, down")
    agent_turns: int
    routes: dict[str, int] = Field(description="agent answers per route")
    operations: dict[str, int] = Field(description="agent answers per operation")
    guide_gaps: list[GuideGap]
    by_day: dict[str, dict[str, int]] = Field(description="day -> outcome -> conversations started that day")
