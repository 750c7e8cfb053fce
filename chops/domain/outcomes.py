"""Outcomes with stable codes, the row-level diff, the result of one call, and the domain errors.

Operations raise a ``DomainError`` subclass inside; the pack's ``SystemApi`` translates it into an
``OperationResult`` at the edge (the cosmicpython pattern), so callers never see an exception for a
domain problem.
"""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class Outcome(StrEnum):
    """The stable outcome codes every caller (pipeline, CLI, eval) switches on."""

    OK = "ok"
    OK_NOOP = "ok_noop"
    REFUSED_MISSING_ARGS = "refused_missing_args"
    REFUSED_INVALID_ARG = "refused_invalid_arg"
    REFUSED_PRECONDITION = "refused_precondition"
    REFUSED_PERMISSION = "refused_permission"
    NOT_IN_SYSTEM = "not_in_system"
    # Decided before the operation runs: the request names another member as the target, and
    # operations only ever change the sender's own account (chops.pipeline.targets).
    REFUSED_OTHER_PERSON = "refused_other_person"

    @property
    def succeeded(self) -> bool:
        """True for ``ok`` and ``ok_noop``."""
        return self in (Outcome.OK, Outcome.OK_NOOP)


class Change(BaseModel):
    """One row-level change.

    An update is one ``Change`` per changed field (``field`` set, ``before`` -> ``after``).
    An insert is ONE ``Change`` with ``field=None``, ``before=None`` and ``after`` = the whole new
    row as a dict (``key`` holds its primary key); a delete is ONE with ``field=None``, ``before`` = the
    whole row deleted and ``after=None``.
    """

    table: str
    key: dict[str, Any]
    field: str | None = None
    before: Any = None
    after: Any = None

    def effect(self) -> str:
        """The CPHOS ``expected_effect`` notation: ``t[id=1].f=v``, ``t+{f=v,...}`` (an insert) or ``t-{f=v,...}``
        (a delete)."""
        if self.field is None:
            deleted = self.after is None and self.before is not None
            inner = ",".join(f"{k}={v}" for k, v in ((self.before if deleted else self.after) or {}).items())
            return f"{self.table}{'-' if deleted else '+'}{{{inner}}}"
        keys = ",".join(f"{k}={v}" for k, v in self.key.items())
        return f"{self.table}[{keys}].{self.field}={self.after}"


class Said(str):
    """A message in the words of the pack's catalog: its English text, with the msgid and fields it was made of, so
    an edge that speaks the customer's language says it in theirs (``OperationResult.said``). An operation returns
    one as its message, or raises a ``DomainError`` with one."""

    msgid: str
    fields: dict[str, Any]

    def __new__(cls, msgid: str, **fields: Any) -> Said:
        text = super().__new__(cls, msgid.format(**fields) if fields else msgid)
        text.msgid, text.fields = msgid, {k: v for k, v in fields.items()}
        return text

    def record(self) -> dict[str, Any]:
        """``{"msgid", "fields"}``: what a result keeps of it (fields as text, JSON-safe)."""
        return {"msgid": self.msgid, "fields": {k: str(v) for k, v in self.fields.items()}}


def said_of(message: Any) -> dict[str, Any] | None:
    """The catalog words a message was made of (``Said.record``), or None for plain text."""
    return message.record() if isinstance(message, Said) else None


class OperationResult(BaseModel):
    """What ``Api.call`` returns for every call, successful or not."""

    operation: str
    outcome: Outcome
    message: str
    diff: list[Change] = Field(default_factory=list)
    data: Any | None = None
    dry_run: bool = False
    committed: bool = False
    idempotency_key: str | None = None
    replayed: bool = False
    # Money the call moves, seen from the user: a refund is positive, a charge negative; None: it moves none.
    # The agent sums it over a conversation ("how much do I get back in total?": chops.pipeline.tally).
    money: Decimal | None = None
    # The message in the pack's catalog words (``Said``): a reply in another language says it in that language.
    said: dict[str, Any] | None = None


class PlanResult(OperationResult):
    """What ``Api.call_plan`` returns: an ``OperationResult`` for the plan as a whole (``operation`` =
    the first step's, ``diff`` = every step's changes in order, ``outcome`` = ``ok``/``ok_noop`` when
    every step succeeded, else the first refused step's), plus each step's own result in ``steps``.

    Being an ``OperationResult``, it is read wherever a single call's result is (the approval queue,
    the console, the conversation's stored result); a one-step plan is that step's result plus ``steps``.
    """

    steps: list[OperationResult] = Field(default_factory=list)


def combined_outcome(results: list[OperationResult]) -> Outcome:
    """``ok`` when every result succeeded and one changed something, ``ok_noop`` when none changed
    anything, else the first refusal's outcome."""
    refused = next((r.outcome for r in results if not r.outcome.succeeded), None)
    if refused is not None:
        return refused
    return Outcome.OK if any(r.outcome == Outcome.OK for r in results) else Outcome.OK_NOOP


class DomainError(Exception):
    """A refusal raised inside an operation; carries its stable outcome code."""

    outcome: Outcome = Outcome.REFUSED_PRECONDITION

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NotInSystem(DomainError):
    """The acting nickname is not a member of the system."""

    outcome = Outcome.NOT_IN_SYSTEM


class MissingArguments(DomainError):
    """A required argument is null, empty or absent."""

    outcome = Outcome.REFUSED_MISSING_ARGS


class InvalidArgument(DomainError):
    """An argument has a wrong type, is out of range, or names nothing usable."""

    outcome = Outcome.REFUSED_INVALID_ARG


class PreconditionFailed(DomainError):
    """The user's state forbids the operation (e.g. unfinished marking)."""

    outcome = Outcome.REFUSED_PRECONDITION


class PermissionDenied(DomainError):
    """The user may not run this operation (not an admin, or still pending approval)."""

    outcome = Outcome.REFUSED_PERMISSION
