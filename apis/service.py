"""``Api``: the only doorway to the system of record.

Order of checks for every call (each refusal rolls back and changes nothing):
unknown operation -> acting user from the caller's nickname (``not_in_system``; a pending user may
only complete their own application) -> missing arguments -> argument types -> admin rights ->
the operation's own checks. Writes run in a unit of work: a dry run leaves without commit; commit
mode claims the audit row (unique idempotency key) first, runs the same code, then commits.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from collections.abc import Collection
from typing import Any, Callable

import sqlalchemy as sa
from pydantic import BaseModel, ValidationError

from apis.outcomes import (DomainError, InvalidArgument, MissingArguments, NotInSystem, Outcome,
                           OperationResult, PermissionDenied, PreconditionFailed)
from apis.profile import Profile, load_profile
from apis.registry import OPERATIONS, Operation
from apis.uow import AbstractUnitOfWork, SqlUnitOfWork

APPROVAL_OPERATION = "VerifyTeacherUserToBeSupTeacher"
_RETRYABLE_MYSQL_ERRORS = {1205, 1213}  # lock wait timeout, deadlock: retry the whole call


def canonical_args(args: Any) -> str:
    """Arguments as canonical JSON (sorted keys): what the audit stores and a replay must match."""
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


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


def parse_args(op: Operation, args: Any) -> BaseModel:
    """Validate ``args`` (CPHOS names) into the operation's model; refusals name the argument."""
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise InvalidArgument(f"Arguments must be a JSON object, got {type(args).__name__}.")
    fields = op.args_model.model_fields
    known = {f.alias or n for n, f in fields.items()} | set(fields)
    unknown = sorted(str(k) for k in args if k not in known)
    if unknown:
        takes = ", ".join(f.alias or n for n, f in fields.items()) or "no arguments"
        raise InvalidArgument(f"Unexpected argument(s) {', '.join(unknown)}; {op.name} takes {takes}. "
                              "The acting user is always you; it cannot be given as an argument.")
    missing = []
    for name, f in fields.items():
        value = args.get(f.alias, args.get(name))
        if f.is_required() and (value is None or (isinstance(value, str) and not value.strip())):
            missing.append(f.alias or name)
    if missing:
        raise MissingArguments(f"{op.name} needs {', '.join(missing)}; please provide it.")
    try:
        return op.args_model.model_validate(args)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise InvalidArgument(f"Invalid argument: {problems}.") from None


class Api:
    """Calls operations as a given user and reads their profile."""

    def __init__(self, engine: sa.Engine, *, uow_factory: Callable[[bool], AbstractUnitOfWork] | None = None):
        self.engine = engine
        self._uow = uow_factory or (lambda write: SqlUnitOfWork(engine, write=write))

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

    def call(self, name: str, nickname: str, args: dict, *, dry_run: bool = False,
             idempotency_key: str | None = None, request_id: str | None = None) -> OperationResult:
        """Run operation ``name`` as ``nickname``. Never raises for domain problems."""
        op = OPERATIONS.get(name)
        dry = bool(op and op.writes and dry_run)
        commit = bool(op and op.writes and not dry_run)
        key = idempotency_key if commit else None
        base = {"operation": str(name), "dry_run": dry, "idempotency_key": idempotency_key}
        if op is None:
            return OperationResult(**base, outcome=Outcome.REFUSED_INVALID_ARG,
                                   message=f"Unknown operation {name!r}; known: {', '.join(OPERATIONS)}.")
        if key is not None:
            replay = self._replay(key, nickname, name, args, base)
            if replay is not None:
                return replay
        for attempt in range(5):
            try:
                return self._run(op, nickname, args, commit, key, request_id, base)
            except sa.exc.IntegrityError:
                replay = self._replay(key, nickname, name, args, base) if key else None
                if replay is not None:
                    return replay  # a concurrent call with the same key won the race
                if attempt == 4:  # e.g. two new schools raced for the same id: retried, still failing
                    return OperationResult(**base, outcome=Outcome.REFUSED_PRECONDITION,
                                           message="A concurrent change conflicted with this one; please try again.")
            except sa.exc.OperationalError as exc:
                code = getattr(exc.orig, "args", [None])[0]
                if code not in _RETRYABLE_MYSQL_ERRORS or attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def _run(self, op: Operation, nickname: str, args: Any, commit: bool, key: str | None,
             request_id: str | None, base: dict) -> OperationResult:
        with self._uow(op.writes) as uow:
            audit_id = None
            if commit:
                audit_id = uow.audit.claim({
                    "created_at": datetime.now(timezone.utc).replace(tzinfo=None), "request_id": request_id,
                    "idempotency_key": key, "nickname": str(nickname)[:64], "user_id": None,
                    "operation": op.name, "args_json": canonical_args(args), "outcome": "pending",
                    "message": "", "diff_json": "[]", "result_json": "{}"})
            try:
                actor = resolve_actor(uow, nickname)
                if actor["status"] == 0 and op.name != APPROVAL_OPERATION:
                    raise PermissionDenied("Your registration is still waiting for approval; the only thing you "
                                           f"can do is complete your application ({APPROVAL_OPERATION}).")
                parsed = parse_args(op, args)
                if op.admin_only and not uow.admins.is_admin(actor["id"]):
                    raise PermissionDenied(f"Only an admin may use {op.name}.")
                message, data = op.run(uow, actor, parsed)
            except DomainError as exc:
                return OperationResult(**base, outcome=exc.outcome, message=exc.message)
            diff = list(uow.changes)
            outcome = Outcome.OK if diff or not op.writes else Outcome.OK_NOOP
            result = OperationResult(**base, outcome=outcome, message=message, diff=diff, data=data,
                                     committed=commit)
            if commit:
                uow.audit.complete(audit_id, {
                    "user_id": actor["id"], "outcome": outcome.value, "message": message,
                    "diff_json": json.dumps([c.model_dump(mode="json") for c in diff], ensure_ascii=False),
                    "result_json": result.model_dump_json()})
                uow.commit()
            return result

    def _replay(self, key: str, nickname: str, name: str, args: Any, base: dict) -> OperationResult | None:
        """The stored result for ``key`` (``replayed=True``), or a refusal if the key was used for a
        different request; ``None`` when the key is unused."""
        with self._uow(False) as uow:
            row = uow.audit.find(key)
        if row is None:
            return None
        if (row["nickname"], row["operation"], row["args_json"]) != (nickname, name, canonical_args(args)):
            return OperationResult(**base, outcome=Outcome.REFUSED_INVALID_ARG,
                                   message="This idempotency key was already used for a different request.")
        return OperationResult.model_validate_json(row["result_json"]).model_copy(update={"replayed": True})
