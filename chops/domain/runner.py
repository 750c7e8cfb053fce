"""Running a pack's typed operations as a user: the part every business shares.

``PlanRunner`` gives a pack ``SystemApi.call`` and ``call_plan`` over the pack's own unit of work and
operations. Order of checks for every call (each refusal changes nothing): unknown operation -> the
acting user (the pack's ``resolve``: ``not_in_system``, or a pack rule such as "pending users may only
complete their application") -> missing arguments -> argument types -> the pack's ``authorize`` (e.g.
admin rights) -> the operation's own checks.

Writes run in a unit of work (cosmicpython): a dry run leaves without commit; commit mode claims the
audit rows (unique idempotency keys) first, runs the same code, then commits. A plan is several writes in
ONE unit of work, in order: all commit or none does, each step with its own audit row (keys ``K``,
``K#2``, ``K#3``), and the key replays the whole plan. A single ``call`` is the one-step case.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Protocol

import sqlalchemy as sa
from pydantic import BaseModel, ValidationError

from chops.domain.operations import MAX_PLAN_STEPS, Operation
from chops.domain.outcomes import (Change, DomainError, InvalidArgument, MissingArguments, OperationResult, Outcome,
                                   PlanResult, combined_outcome, said_of)

_RETRYABLE_MYSQL_ERRORS = {1205, 1213}  # lock wait timeout, deadlock: retry the whole call
ATTEMPTS = 5


class AuditLog(Protocol):
    """The idempotency record inside the unit of work (``chops.domain.audit.SqlAuditLog``)."""

    def find(self, idempotency_key: str) -> dict[str, Any] | None: ...

    def claim(self, entry: dict[str, Any], actor: str | None = None) -> int: ...

    def complete(self, audit_id: int, values: dict[str, Any]) -> None: ...


class UnitOfWork(Protocol):
    """What the runner needs of a pack's unit of work: a transaction, its changes so far, the audit log."""

    changes: list[Change]
    audit: AuditLog

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: Any) -> None: ...

    def commit(self) -> None: ...


Resolve = Callable[[Any, str, Operation], tuple[Any, Any]]  # (uow, user, op) -> (actor, actor id for the audit)
Authorize = Callable[[Any, Any, Operation], None]  # (uow, actor, op): raise PermissionDenied to refuse


def canonical_args(args: Any) -> str:
    """Arguments as canonical JSON (sorted keys): what the audit stores and a replay must match."""
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


def parse_args(op: Operation, args: Any) -> BaseModel:
    """Validate ``args`` (by their argument names) into the operation's model; refusals name the argument."""
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
        if f.is_required() and _blank(value):
            missing.append(f.alias or name)
    if missing:
        raise MissingArguments(f"{op.name} needs {', '.join(missing)}; please provide it.")
    # An optional argument given as null is not given: it takes its default (an address without a second line is
    # "", and the grounding turns a blank value into null).
    optional = {f.alias or n for n, f in fields.items() if not f.is_required()} | \
        {n for n, f in fields.items() if not f.is_required()}
    args = {k: v for k, v in args.items() if not (v is None and k in optional)}
    try:
        return op.args_model.model_validate(args)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise InvalidArgument(f"Invalid argument: {problems}.") from None


def _blank(value: Any) -> bool:
    """A required value that was not really given: null, a blank string or an empty list."""
    return value is None or (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value)


def step_key(key: str | None, index: int) -> str | None:
    """The audit row key of a plan's step ``index`` (0-based): the plan's key for the first step (so a
    one-step plan is stored exactly as a single call), ``<key>#<n>`` for step n of the rest."""
    if key is None:
        return None
    return key if index == 0 else f"{key}#{index + 1}"


def plan_result(results: list[OperationResult], *, committed: bool) -> PlanResult:
    """The plan-level result of ``results`` (see ``PlanResult``)."""
    first = results[0]
    failed = next((r for r in results if not r.outcome.succeeded), None)
    message = failed.message if failed else " ".join(r.message for r in results)
    moved = [r.money for r in results if r.money is not None]
    return PlanResult(operation=first.operation, outcome=combined_outcome(results), message=message,
                      money=sum(moved) if moved else None,
                      diff=[c for r in results for c in r.diff], data=first.data if len(results) == 1 else None,
                      dry_run=first.dry_run, committed=committed, idempotency_key=first.idempotency_key,
                      replayed=all(r.replayed for r in results), steps=results)


class PlanRunner:
    """``call`` and ``call_plan`` of a ``SystemApi`` over a pack's operations and unit of work."""

    def __init__(self, operations: Mapping[str, Operation], uow: Callable[[bool], UnitOfWork], *,
                 resolve: Resolve, authorize: Authorize | None = None) -> None:
        """``uow(write)`` opens the pack's unit of work (``write``: lock what it reads); ``resolve`` finds
        the acting user (raising ``NotInSystem``…); ``authorize`` refuses an operation the actor may not run."""
        self.operations, self._uow, self._resolve = operations, uow, resolve
        self._authorize = authorize or (lambda uow, actor, op: None)

    def call(self, name: str, user: str, args: dict, *, dry_run: bool = False, idempotency_key: str | None = None,
             request_id: str | None = None, staff: str | None = None) -> OperationResult:
        """Run operation ``name`` as ``user``. Never raises for domain problems. ``staff`` names the staff
        member carrying the write out for the user (stored with the audit row); it still runs as ``user``."""
        op = self.operations.get(name)
        if op is None:
            return OperationResult(operation=str(name), idempotency_key=idempotency_key,
                                   outcome=Outcome.REFUSED_INVALID_ARG,
                                   message=f"Unknown operation {name!r}; known: {', '.join(self.operations)}.")
        return self._transact(user, [(op, args)], dry_run=dry_run, idempotency_key=idempotency_key,
                              request_id=request_id, staff=staff).steps[0]

    def call_plan(self, user: str, steps: Sequence[tuple[str, dict]], *, dry_run: bool = False,
                  idempotency_key: str | None = None, request_id: str | None = None,
                  staff: str | None = None) -> PlanResult:
        """Run the writes ``steps`` (``(name, args)``, in order) as ``user`` in ONE unit of work, so each
        step sees the steps before it. A dry run runs every step and rolls back; a real run is all or
        nothing (the first refused step stops it: ``committed`` False). Never raises for domain problems."""
        base = {"operation": str(steps[0][0]) if steps else "", "dry_run": dry_run, "idempotency_key": idempotency_key}
        problem = self._plan_problem(steps)
        if problem:
            return PlanResult(**base, outcome=Outcome.REFUSED_INVALID_ARG, message=problem)
        return self._transact(user, [(self.operations[n], a) for n, a in steps], dry_run=dry_run,
                              idempotency_key=idempotency_key, request_id=request_id, staff=staff)

    def _plan_problem(self, steps: Sequence[tuple[str, dict]]) -> str | None:
        if not 1 <= len(steps) <= MAX_PLAN_STEPS:
            return f"A plan has 1 to {MAX_PLAN_STEPS} steps, got {len(steps)}."
        for name, _ in steps:
            op = self.operations.get(name)
            if op is None:
                return f"Unknown operation {name!r}; known: {', '.join(self.operations)}."
            if not op.writes:
                return f"{name} only reads; a plan holds writes (run reads with call)."
        return None

    def _transact(self, user: str, steps: list[tuple[Operation, Any]], *, dry_run: bool,
                  idempotency_key: str | None, request_id: str | None, staff: str | None) -> PlanResult:
        """Replay a used key, else run the steps, retrying the whole transaction on a lock conflict; a key
        claimed concurrently replays the winner's result."""
        commit = not dry_run and any(op.writes for op, _ in steps)
        key = idempotency_key if commit else None
        if key is not None and (replay := self._replay(key, user, steps)) is not None:
            return replay
        for attempt in range(ATTEMPTS):
            try:
                return self._run(steps, user, dry_run, key, request_id, idempotency_key, staff)
            except sa.exc.IntegrityError:
                replay = self._replay(key, user, steps) if key else None
                if replay is not None:
                    return replay  # a concurrent call with the same key won the race
                if attempt == ATTEMPTS - 1:  # e.g. two inserts raced for the same id: retried, still failing
                    op = steps[0][0]
                    return plan_result([OperationResult(
                        operation=op.name, idempotency_key=idempotency_key, outcome=Outcome.REFUSED_PRECONDITION,
                        message="A concurrent change conflicted with this one; please try again.")], committed=False)
            except sa.exc.OperationalError as exc:
                code = getattr(exc.orig, "args", [None])[0]
                if code not in _RETRYABLE_MYSQL_ERRORS or attempt == ATTEMPTS - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def _run(self, steps: list[tuple[Operation, Any]], user: str, dry_run: bool, key: str | None,
             request_id: str | None, given_key: str | None, staff: str | None) -> PlanResult:
        writes = any(op.writes for op, _ in steps)
        commit = writes and not dry_run
        with self._uow(writes) as uow:
            # The audit rows are claimed first: a concurrent run with the same key blocks on the unique
            # index and then replays this one's result.
            now = datetime.now(timezone.utc).replace(tzinfo=None)
            audit_ids = [uow.audit.claim({
                "created_at": now, "request_id": request_id, "idempotency_key": step_key(key, i),
                "nickname": str(user)[:64], "user_id": None, "operation": op.name, "args_json": canonical_args(args),
                "outcome": "pending", "message": "", "diff_json": "[]", "result_json": "{}"}, actor=staff)
                for i, (op, args) in enumerate(steps)] if commit else []
            results: list[OperationResult] = []
            actor_id = None
            for op, args in steps:
                base = {"operation": op.name, "dry_run": op.writes and dry_run, "idempotency_key": given_key}
                result, actor_id = self._step(uow, op, user, args, base)
                results.append(result)
                if commit and not result.outcome.succeeded:
                    return plan_result(results, committed=False)  # all or nothing: leaving the block rolls back
            if commit:
                results = [r.model_copy(update={"committed": True}) for r in results]
                for audit_id, res in zip(audit_ids, results):
                    uow.audit.complete(audit_id, {
                        "user_id": actor_id, "outcome": res.outcome.value, "message": res.message,
                        "diff_json": json.dumps([c.model_dump(mode="json") for c in res.diff], ensure_ascii=False),
                        "result_json": res.model_dump_json()})
                uow.commit()
            return plan_result(results, committed=commit)

    def _step(self, uow: Any, op: Operation, user: str, args: Any, base: dict) -> tuple[OperationResult, Any]:
        """One operation inside the caller's unit of work: its result and the actor's id. The actor is
        resolved again for every step, so a step sees what the steps before it changed."""
        start = len(uow.changes)
        try:
            actor, actor_id = self._resolve(uow, user, op)
            parsed = parse_args(op, args)
            self._authorize(uow, actor, op)
            message, data, *money = op.run(uow, actor, parsed)
        except DomainError as exc:
            return OperationResult(**base, outcome=exc.outcome, message=exc.message, said=said_of(exc.message)), None
        diff = list(uow.changes[start:])
        outcome = Outcome.OK if diff or not op.writes else Outcome.OK_NOOP
        return OperationResult(**base, outcome=outcome, message=message, diff=diff, data=data,
                               money=money[0] if money else None, said=said_of(message)), actor_id

    def _replay(self, key: str, user: str, steps: list[tuple[Operation, Any]]) -> PlanResult | None:
        """The stored result for ``key`` (``replayed=True``), or a refusal if the key was used for a
        different request; ``None`` when the key is unused."""
        with self._uow(False) as uow:
            first = uow.audit.find(key)
            if first is None:
                return None
            # One row more than asked: a longer plan stored under the key is a different request.
            rows = [first] + [uow.audit.find(step_key(key, i)) for i in range(1, len(steps) + 1)]
        asked = [(user, op.name, canonical_args(args)) for op, args in steps]
        stored = [(r["nickname"], r["operation"], r["args_json"]) for r in rows if r is not None]
        if stored != asked:
            return plan_result([OperationResult(
                operation=steps[0][0].name, idempotency_key=key, outcome=Outcome.REFUSED_INVALID_ARG,
                message="This idempotency key was already used for a different request.")], committed=False)
        results = [OperationResult.model_validate_json(r["result_json"]).model_copy(update={"replayed": True})
                   for r in rows if r is not None]
        return plan_result(results, committed=True)

