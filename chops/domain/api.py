"""``PackApi``: the ``SystemApi`` a pack gets by naming its operations, its unit of work and who acts.

Every pack's doorway is the same delegation to ``chops.domain.runner.PlanRunner`` (order of checks, dry runs,
idempotency keys, audit rows, all-or-nothing plans); what is the pack's own is ``resolve`` (the acting user, from the
authenticated sender, never from an argument), ``load_profile`` and ``people_named``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar

import sqlalchemy as sa

from chops.domain.operations import Operation
from chops.domain.outcomes import OperationResult, PlanResult
from chops.domain.runner import PlanRunner


class PackApi:
    """Calls a pack's operations as a given user and reads their profile. A subclass sets ``operations`` and
    ``unit_of_work`` (its ``SqlUnitOfWork`` class) and implements ``resolve`` and ``load_profile``; ``authorize``
    and ``people_named`` are optional."""

    operations: ClassVar[Mapping[str, Operation]]
    unit_of_work: ClassVar[Callable[..., Any]]

    def __init__(self, engine: sa.Engine, *, uow_factory: Callable[[bool], Any] | None = None):
        self.engine = engine
        self._uow = uow_factory or (lambda write: type(self).unit_of_work(engine, write=write))
        self._runner = PlanRunner(self.operations, self._uow, resolve=self.resolve, authorize=self.authorize)

    def resolve(self, uow: Any, user: Any, op: Operation) -> tuple[Any, Any]:
        """``(the acting user's record, their integer id for the audit row or None)``; raise ``NotInSystem``."""
        raise NotImplementedError

    def authorize(self, uow: Any, actor: Any, op: Operation) -> None:
        """Raise ``PermissionDenied`` when ``actor`` may not run ``op`` (default: anyone may run anything)."""

    def load_profile(self, uow: Any, user: str) -> Any:
        """The user's profile read in ``uow``, or None when they are not in the system."""
        raise NotImplementedError

    def profile(self, user: str) -> Any:
        """The user's profile (``SystemApi.profile``); ``None`` = not in the system."""
        with self._uow(False) as uow:
            return self.load_profile(uow, user)

    def people_named(self, names: Collection[str]) -> list[tuple[Any, tuple[str, ...]]]:
        """``(id, their identifying names)`` of the people ``names`` name (default: nobody; ``SystemApi``)."""
        return []

    def call(self, name: str, user: str, args: dict, *, dry_run: bool = False, idempotency_key: str | None = None,
             request_id: str | None = None, staff: str | None = None) -> OperationResult:
        """Run operation ``name`` as ``user`` (``PlanRunner.call``). Never raises for domain problems."""
        return self._runner.call(name, user, args, dry_run=dry_run, idempotency_key=idempotency_key,
                                 request_id=request_id, staff=staff)

    def call_plan(self, user: str, steps: Sequence[tuple[str, dict]], *, dry_run: bool = False,
                  idempotency_key: str | None = None, request_id: str | None = None,
                  staff: str | None = None) -> PlanResult:
        """Run the writes ``steps`` as ``user`` in one unit of work (``PlanRunner.call_plan``)."""
        return self._runner.call_plan(user, steps, dry_run=dry_run, idempotency_key=idempotency_key,
                                      request_id=request_id, staff=staff)
