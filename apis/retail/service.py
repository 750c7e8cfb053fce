"""``RetailApi``: the only doorway to the shop's system of record (``chops.domain.system.SystemApi``).

The shared machinery (order of checks, dry runs, idempotency keys, audit rows, all-or-nothing plans) is
``chops.domain.runner.PlanRunner``; what is the shop's own is who acts: the signed-in customer (the token's
``sub`` is their user id), never an argument. No operation is admin-only.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Callable

import sqlalchemy as sa

from apis.retail.loader import name_key
from apis.retail.profile import RetailProfile, load_profile
from apis.retail.registry import OPERATIONS
from apis.retail.uow import RetailUnitOfWork
from chops.domain.operations import Operation
from chops.domain.outcomes import NotInSystem, OperationResult, PlanResult
from chops.domain.runner import PlanRunner


def resolve_customer(uow: RetailUnitOfWork, user: Any, op: Operation) -> tuple[dict[str, Any], None]:
    """The acting customer (locked in a write unit of work, so one customer's writes run one at a time).
    The audit row's integer ``user_id`` stays empty: the customer's id is its ``nickname``."""
    customer = uow.customers.get(user) if isinstance(user, str) and user else None
    if customer is None:
        raise NotInSystem("You are not a customer of the shop.")
    return customer, None


class RetailApi:
    """Calls the shop's operations as a given customer and reads their profile."""

    operations = OPERATIONS

    def __init__(self, engine: sa.Engine, *, uow_factory: Callable[[bool], RetailUnitOfWork] | None = None):
        self.engine = engine
        self._uow = uow_factory or (lambda write: RetailUnitOfWork(engine, write=write))
        self._runner = PlanRunner(OPERATIONS, self._uow, resolve=resolve_customer)

    def profile(self, user: str) -> RetailProfile | None:
        """The customer's profile; ``None`` = not a customer."""
        with self._uow(False) as uow:
            return load_profile(uow, user)

    def people_named(self, names: Collection[str]) -> list[tuple[str, tuple[str, ...]]]:
        """The customers whose full "First Last" name is one of ``names`` (case-insensitive): ``(user_id,
        ("First Last",))``. One indexed look-up per chunk of names; strings without a space name no one."""
        keys = {" ".join(n.split()).lower() for n in names if isinstance(n, str) and len(n.split()) > 1}
        if not keys:
            return []
        with self._uow(False) as uow:
            rows = uow.customers.named(keys)
        return [(r["user_id"], (f"{r['first_name']} {r['last_name']}",)) for r in rows
                if name_key(r["first_name"], r["last_name"]) in keys]  # MariaDB's collation may match more

    def call(self, name: str, user: str, args: dict, *, dry_run: bool = False, idempotency_key: str | None = None,
             request_id: str | None = None, staff: str | None = None) -> OperationResult:
        """Run operation ``name`` as customer ``user`` (``PlanRunner.call``). Never raises for domain problems."""
        return self._runner.call(name, user, args, dry_run=dry_run, idempotency_key=idempotency_key,
                                 request_id=request_id, staff=staff)

    def call_plan(self, user: str, steps: Sequence[tuple[str, dict]], *, dry_run: bool = False,
                  idempotency_key: str | None = None, request_id: str | None = None,
                  staff: str | None = None) -> PlanResult:
        """Run the writes ``steps`` as customer ``user`` in one unit of work (``PlanRunner.call_plan``)."""
        return self._runner.call_plan(user, steps, dry_run=dry_run, idempotency_key=idempotency_key,
                                      request_id=request_id, staff=staff)
