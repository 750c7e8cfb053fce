"""``RetailApi``: the only doorway to the shop's system of record (``chops.domain.system.SystemApi``).

The shared machinery (order of checks, dry runs, idempotency keys, audit rows, all-or-nothing plans) is
``chops.domain.api.PackApi``; what is the shop's own is who acts: the signed-in customer (the token's
``sub`` is their user id), never an argument. No operation is admin-only.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from apis.retail.profile import RetailProfile, load_profile
from apis.retail.registry import OPERATIONS
from apis.retail.uow import RetailUnitOfWork
from chops.domain.api import PackApi
from chops.domain.operations import Operation
from chops.domain.outcomes import NotInSystem
from chops.domain.repository import name_keys, people


def resolve_customer(uow: RetailUnitOfWork, user: Any, op: Operation) -> tuple[dict[str, Any], None]:
    """The acting customer (locked in a write unit of work, so one customer's writes run one at a time).
    The audit row's integer ``user_id`` stays empty: the customer's id is its ``nickname``."""
    customer = uow.customers.get(user) if isinstance(user, str) and user else None
    if customer is None:
        raise NotInSystem("You are not a customer of the shop.")
    return customer, None


class RetailApi(PackApi):
    """Calls the shop's operations as a given customer and reads their profile."""

    operations = OPERATIONS
    unit_of_work = RetailUnitOfWork

    def resolve(self, uow: RetailUnitOfWork, user: Any, op: Operation) -> tuple[dict[str, Any], None]:
        """The acting customer (``resolve_customer``)."""
        return resolve_customer(uow, user, op)

    def load_profile(self, uow: RetailUnitOfWork, user: str) -> RetailProfile | None:
        """The customer's profile; ``None`` = not a customer."""
        return load_profile(uow, user)

    def people_named(self, names: Collection[str]) -> list[tuple[str, tuple[str, ...]]]:
        """The customers whose full "First Last" name is one of ``names`` (case-insensitive): ``(user_id,
        ("First Last",))``. One indexed look-up per chunk of names; strings without a space name no one."""
        keys = name_keys(names)
        with self._uow(False) as uow:
            return people(uow.customers.named(keys), keys) if keys else []
