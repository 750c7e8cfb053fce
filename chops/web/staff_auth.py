"""The staff API's one check (guides, desk, analytics): who the acting staff member is, and that a
console session sends its CSRF token with a change (its cookie alone must not authorise one: a
cross-site request carries it too). Scripts authenticate with ``X-Staff-Key`` and need no token."""

from __future__ import annotations

import hmac

from flask import request, session

from chops.web.console import _header_staff, current_staff
from chops.web.errors import ApiError


def require_staff_api() -> str:
    """The acting staff member's name, or ``ApiError`` 401 ``staff_required`` / 403 ``csrf_failed``."""
    name = current_staff()
    if name is None:
        raise ApiError(401, "staff_required", "send X-Staff-Key (and X-Staff-Name), or sign in to the console")
    if request.method not in ("GET", "HEAD") and _header_staff() is None and session.get("staff"):
        sent = request.headers.get("X-CSRF-Token", "")
        if not sent or not hmac.compare_digest(sent, session.get("csrf", "")):
            raise ApiError(403, "csrf_failed", "a console session must send its CSRF token as X-CSRF-Token")
    return name
