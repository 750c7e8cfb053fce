"""``AirlineApi``: the only doorway to the airline's system of record (``chops.domain.api.PackApi``).

The shared machinery (order of checks, dry runs, idempotency keys, audit rows, all-or-nothing plans) is the kit's;
what is the airline's own is who acts: the signed-in traveller (the token's ``sub`` is their user id), never an
argument. No operation is admin-only.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from apis.airline.profile import AirlineProfile, load_profile
from apis.airline.registry import OPERATIONS
from apis.airline.uow import AirlineUnitOfWork
from chops.domain.api import PackApi
from chops.domain.repository import name_keys, people
from chops.domain.operations import Operation
from chops.domain.outcomes import NotInSystem


class AirlineApi(PackApi):
    """Calls the airline's operations as a given traveller and reads their profile."""

    operations = OPERATIONS
    unit_of_work = AirlineUnitOfWork

    def resolve(self, uow: AirlineUnitOfWork, user: Any, op: Operation) -> tuple[dict[str, Any], None]:
        """The acting traveller (locked in a write unit of work, so one traveller's writes run one at a time). The
        audit row's integer ``user_id`` stays empty: the traveller's id is its ``nickname``."""
        found = uow.users.get(user) if isinstance(user, str) and user else None
        if found is None:
            raise NotInSystem("You are not a traveller of the airline.")
        return found, None

    def load_profile(self, uow: AirlineUnitOfWork, user: str) -> AirlineProfile | None:
        """The traveller's profile; ``None`` = not a traveller."""
        return load_profile(uow, user)

    def people_named(self, names: Collection[str]) -> list[tuple[str, tuple[str, ...]]]:
        """The travellers whose full "First Last" name is one of ``names`` (case-insensitive): ``(user_id,
        ("First Last",))``; strings without a space name no one."""
        keys = name_keys(names)
        with self._uow(False) as uow:
            return people(uow.users.named(keys), keys) if keys else []
