"""Bodies of the JSON API as pydantic models: they validate requests and generate the OpenAPI spec."""

from __future__ import annotations

from copy import copy
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

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
    outcome: str | None = Field(None, description="the operation outcome (ok, ok_noop, refused_*, not_in_system)")
    committed: bool = Field(False, description="a write was carried out")
    queued: bool = Field(False, description="the write waits for staff approval")
    approval_id: int | None = None
    error: str | None = Field(None, description="the model error code when the model failed")


class ConversationOut(BaseModel):
    """A conversation with its turns, oldest first."""

    id: str
    nickname: str
    channel: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    turns: list[TurnOut]


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
