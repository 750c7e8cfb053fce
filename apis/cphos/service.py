"""``Api``: the only doorway to the CPHOS system of record.

The shared machinery (order of checks, dry runs, idempotency keys, audit rows, all-or-nothing plans)
is ``chops.domain.api.PackApi``; what is CPHOS's own is who acts: the acting member comes from the
caller's nickname (``not_in_system``), a member still pending approval may only complete their own
application, and admin-only operations need an admin.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from apis.cphos.profile import Profile, load_profile
from apis.cphos.registry import OPERATIONS
from apis.cphos.uow import AbstractUnitOfWork, SqlUnitOfWork
from chops.domain.api import PackApi
from chops.domain.operations import Operation
from chops.domain.outcomes import NotInSystem, PermissionDenied, PreconditionFailed

APPROVAL_OPERATION = "VerifyTeacherUserToBeSupTeacher"


def resolve_actor(uow: AbstractUnitOfWork, nickname: Any) -> dict[str, Any]:
    """The acting member for ``nickname`` (an approved row first, else a lone pending row)."""
    if not isinstance(nickname, str) or not nickname:
        raise NotInSystem("You are not in the system.")
    rows = uow.members.by_nickname(nickname)
    active = [r for r in rows if r["status"] != 0]
    candidates = active or rows
    if not candidates:
        raise NotInSystem(f"The nickname {nickname!r} is not in the system.")
    if len(candidates) > 1:
        raise PreconditionFailed("More than one account uses this nickname; staff must resolve it first.")
    return candidates[0]


def _acting(uow: AbstractUnitOfWork, nickname: str, op: Operation) -> tuple[dict[str, Any], int]:
    """The actor of ``op`` and its id; a pending member may only complete their application."""
    actor = resolve_actor(uow, nickname)
    if actor["status"] == 0 and op.name != APPROVAL_OPERATION:
        raise PermissionDenied("Your registration is still waiting for approval; the only thing you "
                               f"can do is complete your application ({APPROVAL_OPERATION}).")
    return actor, actor["id"]


def _authorize(uow: AbstractUnitOfWork, actor: dict[str, Any], op: Operation) -> None:
    if op.admin_only and not uow.admins.is_admin(actor["id"]):
        raise PermissionDenied(f"Only an admin may use {op.name}.")


class Api(PackApi):
    """Calls operations as a given member and reads their profile (``chops.domain.system.SystemApi``)."""

    operations = OPERATIONS  # the registry the agent reads
    unit_of_work = SqlUnitOfWork

    def resolve(self, uow: AbstractUnitOfWork, nickname: Any, op: Operation) -> tuple[dict[str, Any], int]:
        """The acting member (``_acting``)."""
        return _acting(uow, nickname, op)

    def authorize(self, uow: AbstractUnitOfWork, actor: dict[str, Any], op: Operation) -> None:
        """Admin-only operations need an admin (``_authorize``)."""
        _authorize(uow, actor, op)

    def profile(self, nickname: str) -> Profile | None:
        """The user's profile in one query; ``None`` = not in the system."""
        with self.engine.connect() as conn:
            return load_profile(conn, nickname)

    def members_named(self, names: Collection[str]) -> list[dict[str, Any]]:
        """``id``, ``nickname`` and ``user_name`` of the members whose nickname or user name is one of
        ``names`` (read only; see ``SqlMemberRepository.named``)."""
        if not names:
            return []
        with self._uow(False) as uow:
            return uow.members.named(names)

    def people_named(self, names: Collection[str]) -> list[tuple[int, tuple[str, ...]]]:
        """The members named by one of ``names``: ``(id, (nickname, user_name))`` (``SystemApi``)."""
        return [(row["id"], (row["nickname"], row["user_name"])) for row in self.members_named(names)]
