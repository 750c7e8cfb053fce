"""Staff sign-in and sign-out on the console (pages of ``console.bp``, added when this module is imported).

Failed sign-ins are throttled per account name and per client address (``signin_max_failures`` in
``signin_window_s``): beyond that a sign-in is refused with 429 before the password is checked, so guessing
gains nothing, and the page says when to try again. Failed and throttled attempts are kept in
``chops_signin_attempt``. Every refusal reads the same whether or not the account exists.
"""

from __future__ import annotations

import math

from flask import g, redirect, render_template, request, session, url_for

from chops.staff_accounts import record_signin_attempt
from chops.web.console import bp, staff_accounts
from chops.web.errors import retry_later
from chops.web.services import services


@bp.route("/login", methods=["GET", "POST"])
def login():
    """The staff login form: a named account's name and password start a fresh session."""
    error = None
    if request.method == "POST":
        svc, name = services(), request.form.get("name", "").strip()
        address = request.remote_addr or "unknown"
        wait = svc.limits.signin_wait(name, address)
        if wait is not None:  # refused without checking the password: guessing gains nothing
            record_signin_attempt(svc.engine, name, address, "throttled")
            svc.metrics.observe_refusal("signin_throttled")
            message = f"too many failed sign-ins; try again in {_minutes(wait)}"
            if request.accept_mimetypes.best == "application/json":
                raise retry_later("signin_throttled", message, wait)
            return render_template("console/login.html", error=message), 429, {"Retry-After": str(wait)}
        account = staff_accounts().authenticate(name, request.form.get("password", ""))
        if account is not None:
            # A new session: nothing of the one before sign-in (its CSRF token included) carries over.
            session.clear()
            session["staff"] = account.name
            g.pop("chops_staff", None)
            nxt = request.args.get("next", "")
            # Only local paths: an open redirect would hand the fresh session to another site.
            return redirect(nxt if nxt.startswith("/console") else url_for("console.index"))
        svc.limits.signin_failed(name, address)
        record_signin_attempt(svc.engine, name, address, "failed")
        error = "wrong name or password"  # one message for every failure: no hint which names exist
    return render_template("console/login.html", error=error), (401 if error else 200)


def _minutes(seconds: int) -> str:
    return f"{seconds} s" if seconds < 120 else f"{math.ceil(seconds / 60)} minutes"


@bp.post("/logout")
def logout():
    """End the staff session."""
    session.clear()
    return redirect(url_for("console.login"))
