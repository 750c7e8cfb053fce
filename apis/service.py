"""``Api``: the only doorway to the system of record.

Order of checks for every call (each refusal rolls back and changes nothing):
unknown operation -> acting user from the caller's nickname (``not_in_system``; a pending user may
only complete their own application) -> missing arguments -> argument types -> admin rights ->
the operation's own checks. Writes run in a unit of work: a dry run leaves without commit; commit
mode claims the audit row (unique idempotency key) first, runs the same code, then commits.

A plan (``call_plan``) is several writes in ONE unit of work, in order: all commit or none does, each
step with its own audit row (keys ``K``, ``K#2``, ``K#3``), and the key replays the whole plan. A
single ``call`` is the one-step case of the same code.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from datetime import datetime, timezone
from typing import Any, Callable

import sqlalchemy as sa
from pydantic import BaseModel, ValidationError

from apis.profile import Profile, load_profile
from apis.registry import OPERATIONS
from apis.uow import AbstractUnitOfWork, SqlUnitOfWork
from chops.domain.operations import MAX_PLAN_STEPS, Operation
from chops.domain.outcomes import (DomainError, InvalidArgument, MissingArguments, NotInSystem, OperationResult,
                                   Outcome, PermissionDenied, PlanResult, PreconditionFailed, combined_outcome)

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

    operations = OPERATIONS  # the registry the agent reads (``chops.domain.system.SystemApi``)

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

    def people_named(self, names: Collection[str]) -> list[tuple[int, tuple[str, ...]]]:
        """The members named by one of ``names``: ``(id, (nickname, user_name))`` (``SystemApi``)."""
        return [(row["id"], (row["nickname"], row["user_name"])) for row in self.members_named(names)]

    def call(self, name: str, nickname: str, args: dict, *, dry_run: bool = False,
             idempotency_key: str | None = None, request_id: str | None = None,
             staff: str | None = None) -> OperationResult:
        """Run operation ``name`` as ``nickname``. Never raises for domain problems.

        ``staff`` names the staff member carrying the write out for the user (the audit row's actor,
        stored in the same transaction); the operation still runs as ``nickname``, with its rights."""
        op = OPERATIONS.get(name)
        if op is None:
            return OperationResult(operation=str(name), dry_run=False, idempotency_key=idempotency_key,
                                   outcome=Outcome.REFUSED_INVALID_ARG,
                                   message=f"Unknown operation {name!r}; known: {', '.join(OPERATIONS)}.")
        return self._transact(nickname, [(op, args)], dry_run=dry_run, idempotency_key=idempotency_key,
                              request_id=request_id, staff=staff).steps[0]

    def call_plan(self, nickname: str, steps: Sequence[tuple[str, dict]], *, dry_run: bool = False,
                  idempotency_key: str | None = None, request_id: str | None = None,
                  staff: str | None = None) -> PlanResult:
        """Run the write operations ``steps`` (``(name, args)`` pairs, in order) as ``nickname`` in ONE
        unit of work, so each step sees the changes of the steps before it. Never raises for domain problems.

        A dry run runs every step (a refused step changes nothing: operations check before they write)
        and rolls back, so the caller learns each step's outcome. A real run is all or nothing: the
        first refused step stops it and nothing is committed (``committed`` False, the refusal's
        outcome); otherwise every step commits together, each with its audit row, and the key replays
        the whole plan's result. Reads are not plan steps (they change nothing and are run on their own).
        """
        base = {"operation": str(steps[0][0]) if steps else "", "dry_run": dry_run, "idempotency_key": idempotency_key}
        problem = _plan_problem(steps)
        if problem:
            return PlanResult(**base, outcome=Outcome.REFUSED_INVALID_ARG, message=problem)
        return self._transact(nickname, [(OPERATIONS[n], a) for n, a in steps], dry_run=dry_run,
                              idempotency_key=idempotency_key, request_id=request_id, staff=staff)

    def _transact(self, nickname: str, steps: list[tuple[Operation, Any]], *, dry_run: bool,
                  idempotency_key: str | None, request_id: str | None, staff: str | None = None) -> PlanResult:
        """``call`` and ``call_plan``: replay a used key, else run the steps, retrying the whole
        transaction on a lock conflict; a key claimed concurrently replays the winner's result."""
        commit = not dry_run and any(op.writes for op, _ in steps)
        key = idempotency_key if commit else None
        if key is not None:
            replay = self._replay(key, nickname, steps)
            if replay is not None:
                return replay
        for attempt in range(5):
            try:
                return self._run(steps, nickname, dry_run, key, request_id, idempotency_key, staff)
            except sa.exc.IntegrityError:
                replay = self._replay(key, nickname, steps) if key else None
                if replay is not None:
                    return replay  # a concurrent call with the same key won the race
                if attempt == 4:  # e.g. two new schools raced for the same id: retried, still failing
                    results = [OperationResult(operation=op.name, dry_run=False, idempotency_key=idempotency_key,
                                               outcome=Outcome.REFUSED_PRECONDITION,
                                               message="A concurrent change conflicted with this one; please "
                                                       "try again.") for op, _ in steps[:1]]
                    return _plan(results, committed=False)
            except sa.exc.OperationalError as exc:
                code = getattr(exc.orig, "args", [None])[0]
                if code not in _RETRYABLE_MYSQL_ERRORS or attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def _run(self, steps: list[tuple[Operation, Any]], nickname: str, dry_run: bool, key: str | None,
             request_id: str | None, given_key: str | None, staff: str | None) -> PlanResult:
        writes = any(op.writes for op, _ in steps)
        commit = writes and not dry_run
        with self._uow(writes) as uow:
            # The audit rows are claimed first: a concurrent run with the same key blocks on the unique
            # index and then replays this one's result.
            audit_ids = [uow.audit.claim({
                "created_at": datetime.now(timezone.utc).replace(tzinfo=None), "request_id": request_id,
                "idempotency_key": step_key(key, i), "nickname": str(nickname)[:64], "user_id": None,
                "operation": op.name, "args_json": canonical_args(args), "outcome": "pending",
                "message": "", "diff_json": "[]", "result_json": "{}"}, actor=staff) for i, (op, args) in enumerate(steps)
            ] if commit else []
            results: list[OperationResult] = []
            actor_id = None
            for op, args in steps:
                base = {"operation": op.name, "dry_run": op.writes and dry_run, "idempotency_key": given_key}
                result, actor_id = self._step(uow, op, nickname, args, base)
                results.append(result)
                if commit and not result.outcome.succeeded:
                    return _plan(results, committed=False)  # all or nothing: leaving the block rolls back
            if commit:
                results = [r.model_copy(update={"committed": True}) for r in results]
                for audit_id, res in zip(audit_ids, results):
                    uow.audit.complete(audit_id, {
                        "user_id": actor_id, "outcome": res.outcome.value, "message": res.message,
                        "diff_json": json.dumps([c.model_dump(mode="json") for c in res.diff], ensure_ascii=False),
                        "result_json": res.model_dump_json()})
                uow.commit()
            return _plan(results, committed=commit)

    @staticmethod
    def _step(uow: AbstractUnitOfWork, op: Operation, nickname: str, args: Any,
              base: dict) -> tuple[OperationResult, int | None]:
        """One operation inside the caller's unit of work: its result and the acting member's id. The
        actor is resolved again for every step, so a step sees what the steps before it changed."""
        start = len(uow.changes)
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
            return OperationResult(**base, outcome=exc.outcome, message=exc.message), None
        diff = list(uow.changes[start:])
        outcome = Outcome.OK if diff or not op.writes else Outcome.OK_NOOP
        return OperationResult(**base, outcome=outcome, message=message, diff=diff, data=data), actor["id"]

    def _replay(self, key: str, nickname: str, steps: list[tuple[Operation, Any]]) -> PlanResult | None:
        """The stored result for ``key`` (``replayed=True``), or a refusal if the key was used for a
        different request; ``None`` when the key is unused."""
        with self._uow(False) as uow:
            first = uow.audit.find(key)
            if first is None:
                return None
            # One row more than asked: a longer plan stored under the key is a different request.
            rows = [first] + [uow.audit.find(step_key(key, i)) for i in range(1, len(steps) + 1)]
        asked = [(nickname, op.name, canonical_args(args)) for op, args in steps]
        stored = [(r["nickname"], r["operation"], r["args_json"]) for r in rows if r is not None]
        if stored != asked:
            return _plan([OperationResult(operation=steps[0][0].name, dry_run=False, idempotency_key=key,
                                          outcome=Outcome.REFUSED_INVALID_ARG,
                                          message="This idempotency key was already used for a different request.")],
                         committed=False)
        results = [OperationResult.model_validate_json(r["result_json"]).model_copy(update={"replayed": True})
                   for r in rows if r is not None]
        return _plan(results, committed=True)


def step_key(key: str | None, index: int) -> str | None:
    """The audit row key of a plan's step ``index`` (0-based): the plan's key for the first step (so a
    one-step plan is stored exactly as a single call), ``<key>#<n>`` for step n of the rest."""
    if key is None:
        return None
    return key if index == 0 else f"{key}#{index + 1}"


def _plan_problem(steps: Sequence[tuple[str, dict]]) -> str | None:
    """Why ``steps`` is not a plan ``call_plan`` accepts, or None."""
    if not 1 <= len(steps) <= MAX_PLAN_STEPS:
        return f"A plan has 1 to {MAX_PLAN_STEPS} steps, got {len(steps)}."
    for name, _ in steps:
        op = OPERATIONS.get(name)
        if op is None:
            return f"Unknown operation {name!r}; known: {', '.join(OPERATIONS)}."
        if not op.writes:
            return f"{name} only reads; a plan holds writes (run reads with Api.call)."
    return None


def _plan(results: list[OperationResult], *, committed: bool) -> PlanResult:
    """The plan-level result of ``results`` (see ``PlanResult``)."""
    first = results[0]
    failed = next((r for r in results if not r.outcome.succeeded), None)
    message = failed.message if failed else " ".join(r.message for r in results)
    return PlanResult(operation=first.operation, outcome=combined_outcome(results), message=message,
                      diff=[c for r in results for c in r.diff], data=first.data if len(results) == 1 else None,
                      dry_run=first.dry_run, committed=committed, idempotency_key=first.idempotency_key,
                      replayed=all(r.replayed for r in results), steps=results)
