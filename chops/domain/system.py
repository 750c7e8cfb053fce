"""What the agent needs of a business's system, as typed Protocols: the signed-in user's profile, the people
a message may name, and the typed operations, called as that user (for real, as a dry run, or as one plan).

A domain pack implements ``SystemApi`` (CPHOS: ``apis.cphos.service.Api``); the agent, the support desk and the
evaluation use nothing else of it, so a second business needs no change to them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

from chops.domain.operations import Operation
from chops.domain.outcomes import OperationResult, PlanResult


class Profile(Protocol):
    """The signed-in user's basic info: everything the agent may know of them without an operation."""

    user_id: Any  # the user's id in the system (``people_named`` gives the same kind)

    @property
    def names(self) -> tuple[str, ...]:
        """The names that identify the user themself (a request naming them is not about someone else)."""

    def describe(self) -> str:
        """A compact plain-text rendering for prompts (one fact per line)."""

    def lookup_data(self) -> Mapping[str, Any]:
        """The profile as a look-up result (keys as the pack's look-ups name them): the executor may take an id
        argument's value from it (``chops.pipeline.choices``) as from any look-up."""

    def grounding_values(self) -> Collection[str]:
        """Values of the profile an operation argument may take though the user never typed them (a payment
        method's id, an order number): the profile is a look-up the agent has already made. Empty when
        every argument must come from the user's own words."""


class SystemApi(Protocol):
    """The only doorway to the business's system of record; ``user`` is always the authenticated sender."""

    operations: Mapping[str, Operation]

    def profile(self, user: str) -> Profile | None:
        """The user's profile, or None when they are not in the system."""

    def people_named(self, names: Collection[str]) -> list[tuple[Any, tuple[str, ...]]]:
        """``(id, their identifying names)`` of the people with one of ``names`` (the "about someone else"
        check looks them up in the request's words)."""

    def call(self, name: str, user: str, args: dict, *, dry_run: bool = False, idempotency_key: str | None = None,
             request_id: str | None = None, staff: str | None = None) -> OperationResult:
        """Run one operation as ``user``; never raises for a domain refusal."""

    def call_plan(self, user: str, steps: Sequence[tuple[str, dict]], *, dry_run: bool = False,
                  idempotency_key: str | None = None, request_id: str | None = None,
                  staff: str | None = None) -> PlanResult:
        """Run several writes as ``user`` in one transaction: all or nothing."""
