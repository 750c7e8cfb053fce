"""``Api``: the only doorway to the CPHOS system of record.

The shared machinery (order of checks, dry runs, idempotency keys, audit rows, all-or-nothing plans)
is ``chops.domain.runner.PlanRunner``; what is CPHOS's own is who acts: the acting member comes from the
caller's nickname (``not_in_system``), a member still pending approval may only complete their own
application, and admin-only operations need an admin.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Callable

import sqlalchemy as sa

from apis.cphos.profile import Profile, load_profile
from apis.cphos.registry import OPERATIONS
from apis.cphos.uow import AbstractUnitOfWork, SqlUnitOfWork
from chops.domain.operations import Operation
from chops.domain.outcomes import NotInSystem, OperationResult, PermissionDenied, PlanResult, PreconditionFailed
from chops.domain.runner import PlanRunner

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


class Api:
    """Calls operations as a given member and reads their profile (``chops.domain.system.SystemApi``)."""

    operations = OPERATIONS  # the registry the agent reads

    def __init__(self, engine: sa.Engine, *, uow_factory: Callable[[bool], AbstractUnitOfWork] | None = None):
        self.engine = engine
        self._uow = uow_factory or (lambda write: SqlUnitOfWork(engine, write=write))
        self._runner = PlanRunner(OPERATIONS, self._uow, resolve=_acting, authorize=_authorize)

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

    def call(self, name: str, nickname: str, args: dict, *, dry_run: bool = False,
             idempotency_key: str | None = None, request_id: str | None = None,
             staff: str | None = None) -> OperationResult:
        """Run operation ``name`` as ``nickname`` (``PlanRunner.call``). Never raises for domain problems."""
        return self._runner.call(name, nickname, args, dry_run=dry_run, idempotency_key=idempotency_key,
                                 request_id=request_id, staff=staff)

    def call_plan(self, nickname: str, steps: Sequence[tuple[str, dict]], *, dry_run: bool = False,
                  idempotency_key: str | None = None, request_id: str | None = None,
                  staff: str | None = None) -> PlanResult:
        """Run the writes ``steps`` as ``nickname`` in one unit of work (``PlanRunner.call_plan``)."""
        return self._runner.call_plan(nickname, steps, dry_run=dry_run, idempotency_key=idempotency_key,
                                      request_id=request_id, staff=staff)
