"""The support staff console: server-rendered pages over the conversation store and the audit log.

Staff sign in with their named account (``chops staff add``) on the login form (a session cookie
follows; the account is re-checked on every request, so disabling it ends its sessions). Scripts send
the shared ``CHOPS_STAFF_API_KEY`` as the ``X-Staff-Key`` header, naming the acting member (an enabled
account) in ``X-Staff-Name``. In demo mode without a staff key the console is open.
Every form carries a per-session CSRF token because the session cookie alone authorises a POST.
"""

from __future__ import annotations

import hmac
import json
import secrets
from typing import Any

import sqlalchemy as sa
from flask import Blueprint, abort, flash, g, redirect, render_template, request, session, url_for

from chops.staff_accounts import StaffAccounts
from chops.web.console_filters import ConversationFilter, FilterError, choices, find_conversations
from chops.web.services import services

bp = Blueprint("console", __name__, url_prefix="/console", template_folder="templates")

_OPEN_ENDPOINTS = {"console.login"}
_UNSET = object()


def staff_accounts() -> StaffAccounts:
    """The staff accounts of this app's database."""
    return StaffAccounts(services().engine)


def _header_staff() -> str | None:
    """A script's acting member: the right ``X-Staff-Key`` and, when ``X-Staff-Name`` is sent, that
    enabled account's name ("api-key" without a name); None otherwise."""
    key = services().settings.staff_api_key
    sent = request.headers.get("X-Staff-Key")
    if not (key and sent and hmac.compare_digest(sent.encode(), key.encode())):
        return None
    name = request.headers.get("X-Staff-Name")
    if name is None:
        return "api-key"
    account = staff_accounts().active(name)
    return account.name if account is not None else None


def _current_staff() -> str | None:
    settings = services().settings
    if (name := _header_staff()) is not None:
        return name
    if session.get("staff"):
        if staff_accounts().active(session["staff"]) is not None:
            return session["staff"]
        session.clear()  # the account was disabled (or removed) since sign-in
    if settings.demo_mode and not settings.staff_api_key:
        return "demo-staff"
    return None


def current_staff() -> str | None:
    """The acting staff member's name (their account name; "api-key" for the shared key without
    ``X-Staff-Name``; "demo-staff" in open demo mode), or None. Looked up once per request."""
    name = g.get("chops_staff", _UNSET)
    if name is _UNSET:
        name = g.chops_staff = _current_staff()
    return name


def csrf_token() -> str:
    """This session's CSRF token (created on first use)."""
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(24)
    return session["csrf"]


@bp.app_context_processor
def _template_globals() -> dict:
    return {"csrf_token": csrf_token, "staff": current_staff if request.path.startswith("/console") else None}


@bp.before_request
def _require_staff():
    if request.endpoint in _OPEN_ENDPOINTS:
        return None
    if current_staff() is None:
        return redirect(url_for("console.login", next=request.full_path))
    if request.method == "POST" and _header_staff() is None:
        sent = request.form.get("csrf", "")
        if not sent or not hmac.compare_digest(sent, session.get("csrf", "")):
            abort(400, "the form expired (CSRF check failed); reload the page")
    return None


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


@bp.app_template_filter("pretty")
def _pretty_filter(value: Any) -> str:
    return _pretty(value)


def _approvals(status: str | None) -> list:
    return list(services().store.list_approvals(status))


# --- conversations -----------------------------------------------------------------------

def _filtered() -> tuple[ConversationFilter, list[dict]]:
    flt = ConversationFilter.from_args(request.args)
    try:
        return flt, find_conversations(services().engine, flt)
    except FilterError as exc:
        abort(400, str(exc))


@bp.get("/")
def index():
    """The live list of conversations, filtered by user, route, outcome and date (``?user=&route=
    &outcome=&since=&until=``); the table refreshes itself with the same filters."""
    pending = len(_approvals("pending"))
    flt, rows = _filtered()
    return render_template("console/index.html", conversations=rows, pending=pending, filter=flt,
                           choices=choices(services().engine))


@bp.get("/fragments/conversations")
def conversations_fragment():
    """The rows of the conversation table, for the page's auto-refresh."""
    return render_template("console/_conversations.html", conversations=_filtered()[1])


def _conversation_or_404(conversation_id: str):
    conv = services().store.get(conversation_id) if len(conversation_id) <= 64 else None
    if conv is None:
        abort(404, f"no conversation {conversation_id!r}")
    return conv


@bp.get("/conversations/<conversation_id>")
def conversation(conversation_id: str):
    """One conversation with every turn's trace."""
    conv = _conversation_or_404(conversation_id)
    return render_template("console/conversation.html", conv=conv,
                           turns=services().store.history(conversation_id, with_trace=True))


@bp.get("/fragments/conversations/<conversation_id>")
def conversation_fragment(conversation_id: str):
    """The turns of one conversation, for the page's auto-refresh."""
    _conversation_or_404(conversation_id)
    return render_template("console/_turns.html", turns=services().store.history(conversation_id, with_trace=True))


# --- approval queue ----------------------------------------------------------------------

@bp.get("/approvals")
def approvals():
    """The approval queue (``?status=pending|approved|rejected|failed|all``)."""
    status = request.args.get("status", "pending")
    if status not in ("pending", "approved", "rejected", "failed", "all"):
        abort(400, "status is pending, approved, rejected, failed or all")
    return render_template("console/approvals.html", approvals=_approvals(None if status == "all" else status),
                           status=status)


def _decide(approval_id: int, approve: bool):
    from chops.store import StoreError

    note = (request.form.get("note") or "").strip()[:2000] or None
    try:
        result = services().store.decide_approval(approval_id, approve=approve, staff=current_staff(), note=note)
    except StoreError as exc:
        flash(f"approval #{approval_id}: {exc.message}", "error")
        return redirect(url_for("console.approvals"))
    outcome = (result.result or {}).get("outcome") if approve else None
    services().metrics.approvals.labels(decision=result.status).inc()
    if approve and (result.result or {}).get("committed"):
        services().metrics.writes.labels(state="committed_by_staff").inc()
    notify_user(result)
    flash(f"approval #{approval_id} {result.status}" + (f": {outcome}" if outcome else ""), "ok")
    return redirect(url_for("console.approvals"))


def notify_user(approval) -> None:
    """Append the staff decision to the user's conversation as a reply-only turn (empty user text),
    so the user sees it in the widget and the pipeline sees it in the history."""
    from chops.domain.outcomes import PlanResult
    from chops.i18n import reply_language
    from chops.pipeline import TurnResult
    from chops.pipeline.replies import staff_decision_reply

    if not approval.conversation_id:
        return
    result = approval.result or {}
    # In the language the user wrote in (the newest of their messages that shows one).
    lang = reply_language(t.user_text for t in reversed(services().store.history(approval.conversation_id)))
    steps = [(services().api.operations[s.operation], s.args) for s in approval.steps]
    text = staff_decision_reply(steps, approval.status, PlanResult.model_validate(result) if result else None,
                                approval.note, lang)
    services().store.append_turn(approval.conversation_id, "", TurnResult(
        reply=text, operation=approval.operation, args=approval.args,
        steps=[{"operation": s.operation, "args": s.args} for s in approval.steps],
        outcome=result.get("outcome") if approval.status != "rejected" else None,
        committed=bool(result.get("committed")),
        trace={"staff_decision": {"approval_id": approval.id, "status": approval.status,
                                  "decided_by": approval.decided_by, "note": approval.note, "result": result}}))


@bp.post("/approvals/<int:approval_id>/approve")
def approve(approval_id: int):
    """Commit the queued write (every step of its plan, atomically) with its stored idempotency key."""
    return _decide(approval_id, True)


@bp.post("/approvals/<int:approval_id>/reject")
def reject(approval_id: int):
    """Reject the queued write; the note is appended to the user's conversation."""
    return _decide(approval_id, False)


# --- solution memory ---------------------------------------------------------------------

@bp.get("/memory")
def memory():
    """The remembered solutions (``?status=live|deleted|all``), newest first, each with a Delete button."""
    status = request.args.get("status", "live")
    if status not in ("live", "deleted", "all"):
        abort(400, "status is live, deleted or all")
    entries = services().memory.entries(None if status == "all" else status)
    return render_template("console/memory.html", entries=entries, status=status,
                           enabled=services().settings.memory_enabled)


@bp.post("/memory/<int:solution_id>/delete")
def delete_solution(solution_id: int):
    """Delete a remembered solution: it is never shown as a demonstration again."""
    if services().memory.delete(solution_id, staff=current_staff()):
        flash(f"solution #{solution_id} deleted", "ok")
    else:
        flash(f"solution #{solution_id}: no such live solution", "error")
    return redirect(url_for("console.memory"))


# --- audit log and policies --------------------------------------------------------------

AUDIT_PAGE = 100


@bp.get("/audit")
def audit():
    """The audit log, newest first (``?before=<id>`` pages back); ``actor`` is the staff member who
    committed a write for the user (None: the user's own request)."""
    from chops.tables import audit_actor, audit_log

    query = (sa.select(audit_log, audit_actor.c.actor)
             .select_from(audit_log.outerjoin(audit_actor, audit_actor.c.audit_id == audit_log.c.id))
             .order_by(audit_log.c.id.desc()).limit(AUDIT_PAGE))
    before = request.args.get("before", type=int)
    if before is not None:
        query = query.where(audit_log.c.id < before)
    with services().engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(query)]
    return render_template("console/audit.html", rows=rows, page=AUDIT_PAGE)


@bp.route("/policies", methods=["GET", "POST"])
def policies():
    """Per-operation "always needs staff approval" switches (write operations only)."""
    store = services().store
    writes = [op for op in services().api.operations.values() if op.writes]
    if request.method == "POST":
        wanted = set(request.form.getlist("always"))
        for op in writes:
            store.set_policy(op.name, op.name in wanted)
        flash("policies saved", "ok")
        return redirect(url_for("console.policies"))
    current = store.get_policies()
    return render_template("console/policies.html", operations=writes, current=current)
