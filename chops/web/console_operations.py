"""The console's operation page: staff carry out one typed operation for a user.

Pick an operation, fill the form generated from its argument schema, name the user (nickname): the
dry run shows the row-level diff and writes nothing; Commit then runs the same call for real through
``Api.call``, exactly as for the agent: the operation runs as the user, with the user's rights and
the same checks and outcome codes. The idempotency key is minted when the form is first shown, so
a double submit commits once (the second replays the first's result). The audit log names the staff
member as the actor (``chops_audit_actor``) and the user as the subject (the audit row's nickname).

Policies: an operation that "always needs staff approval" is committed here without a queue entry:
a named staff member committing after seeing the dry run *is* that approval (as when one member
approves a queued write).

The routes live on the console blueprint (``/console/operations``), so the console's sign-in and
CSRF checks cover them.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from flask import abort, render_template, request

from chops.domain.operations import Operation
from chops.domain.outcomes import Outcome
from chops.web.console import bp, current_staff
from chops.web.services import services

_KEY = re.compile(r"console-[0-9a-f]{32}")
_INTEGER = re.compile(r"[+-]?\d{1,18}")
REQUEST_ID = "console"  # the audit row's request_id for writes committed on this page


def form_fields(op: Operation) -> list[dict[str, Any]]:
    """The form's inputs, from the operation's JSON schema: ``name`` (the CPHOS argument name),
    ``type`` (``integer`` or ``string``), ``required``, ``description`` and ``max_length``."""
    schema = op.json_schema()
    required = set(schema.get("required", []))
    return [{"name": name, "type": prop.get("type", "string"), "required": name in required,
             "description": prop.get("description", ""), "max_length": prop.get("maxLength")}
            for name, prop in schema.get("properties", {}).items()]


def args_from_form(op: Operation, form: Any) -> dict[str, Any]:
    """The arguments as the agent would send them: integers as numbers, empty inputs left out (the
    Api refuses a missing required one with ``refused_missing_args``); a value that is not a number
    in an integer field is passed on as typed, so the Api refuses it with ``refused_invalid_arg``."""
    args: dict[str, Any] = {}
    for field in form_fields(op):
        raw = (form.get(f"arg.{field['name']}") or "").strip()
        if raw:
            args[field["name"]] = int(raw) if field["type"] == "integer" and _INTEGER.fullmatch(raw) else raw
    return args


def _operation_or_404(name: str) -> Operation:
    op = services().api.operations.get(name)
    if op is None:
        abort(404, f"no operation {name!r}")
    return op


@bp.get("/operations")
def operations():
    """The operations staff can carry out for a user (``?user=`` is carried to the form)."""
    policies = services().store.get_policies()
    return render_template("console/operations.html", operations=list(services().api.operations.values()), policies=policies,
                           user=request.args.get("user", "")[:64])


@bp.get("/operations/<name>")
def operation_form(name: str):
    """The empty form of one operation, with a fresh idempotency key."""
    op = _operation_or_404(name)
    return _page(op, user=request.args.get("user", "").strip()[:64], args={}, key=f"console-{uuid.uuid4().hex}")


@bp.post("/operations/<name>")
def operation_run(name: str):
    """``action=preview``: the dry run (nothing written). ``action=commit`` (writes only): the real
    call with the form's idempotency key, the signed-in member recorded as the actor."""
    op = _operation_or_404(name)
    action, key = request.form.get("action", "preview"), request.form.get("key", "")
    if action not in ("preview", "commit") or (action == "commit" and not op.writes):
        abort(400, "action is preview, or commit for a write")
    if not _KEY.fullmatch(key):
        abort(400, "the form's idempotency key is missing or malformed; reload the form")
    user = request.form.get("user", "").strip()[:64]
    args = args_from_form(op, request.form)
    api = services().api
    if action == "preview":
        result = api.call(op.name, user, args, dry_run=True)
    else:
        result = api.call(op.name, user, args, idempotency_key=key, request_id=REQUEST_ID, staff=current_staff())
        if result.committed and not result.replayed:
            services().metrics.writes.labels(state="committed_by_staff").inc()
    status = 200 if Outcome(result.outcome).succeeded else 422
    return _page(op, user=user, args=args, key=key, result=result, action=action), status


def _page(op: Operation, *, user: str, args: dict, key: str, result: Any = None, action: str | None = None):
    needs_approval = op.writes and services().store.needs_approval(op.name)
    return render_template("console/operation.html", op=op, fields=form_fields(op), user=user, args=args, key=key,
                           result=result, action=action, needs_approval=needs_approval)
