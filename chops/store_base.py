"""What the store's modules share: the stable error type and the JSON/timestamp column helpers."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel


class StoreError(Exception):
    """A store request that cannot be done; ``code`` is stable (``not_found``, ``already_decided``,
    ``bad_request``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def now() -> datetime:
    """The current time as naive UTC (portable ``DateTime`` columns)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def dumps(value: Any) -> str | None:
    """A JSON column's text (pydantic models by their own JSON); None stays NULL."""
    if value is None:
        return None
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, ensure_ascii=False, default=str)


def loads(text: str | None) -> Any:
    """A JSON column's value; NULL or empty is None."""
    return json.loads(text) if text else None
