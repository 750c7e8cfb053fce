"""What every response and request goes through: security headers, cookies, proxies, the staff rate limit.

* Content-Security-Policy on HTML pages (the console and the widget page): scripts and style sheets only
  from this service, inline ones only with the request's nonce (the templates put ``csp_nonce()`` on
  theirs); inline ``style`` attributes are allowed because the analytics charts are matplotlib's inline
  SVG, which styles its shapes that way. ``frame-ancestors``: the widget page may be framed by this
  service and the host sites in ``widget_frame_ancestors``; the console by nobody.
* Every response: ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: same-origin`` (tokens ride in
  the widget page's URL: they must not leak to other sites in a Referer).
* Console cookies: ``HttpOnly``, ``SameSite=Lax``, and ``Secure`` unless ``cookie_secure`` is off (by
  default off only in demo mode, which runs over plain HTTP).
* ``trusted_proxies`` > 0 wraps the app in werkzeug's ``ProxyFix``: the client address and scheme come
  from that many ``X-Forwarded-*`` hops, and no more (a client cannot forge its address past them).
"""

from __future__ import annotations

import secrets

from flask import Flask, g, request
from werkzeug.middleware.proxy_fix import ProxyFix

from chops.settings import Settings
from chops.web.console import current_staff
from chops.web.services import services

STAFF_PATHS = ("/console", "/v1/staff")


def csp_nonce() -> str:
    """This request's CSP nonce (templates put it on inline ``<script>`` and ``<style>`` elements)."""
    if "csp_nonce" not in g:
        g.csp_nonce = secrets.token_urlsafe(16)
    return g.csp_nonce


def content_security_policy(frame_ancestors: str) -> str:
    """The policy of an HTML page of this service."""
    nonce = csp_nonce()
    return ("default-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'; img-src 'self' data:; "
            f"script-src 'self' 'nonce-{nonce}'; style-src 'self' 'nonce-{nonce}'; style-src-attr 'unsafe-inline'; "
            f"connect-src 'self'; frame-ancestors {frame_ancestors}")


def install_security(app: Flask, settings: Settings) -> None:
    """Headers, cookie flags, proxy handling and the staff rate limit for ``app``."""
    secure = settings.cookie_secure if settings.cookie_secure is not None else not settings.demo_mode
    app.config.update(SESSION_COOKIE_SECURE=secure, SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax")
    if settings.trusted_proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies, x_proto=settings.trusted_proxies,
                                x_host=settings.trusted_proxies)
    widget_ancestors = " ".join(["'self'", *settings.widget_frame_ancestors])
    app.jinja_env.globals["csp_nonce"] = csp_nonce

    @app.before_request
    def _limit_staff():
        if request.path.startswith(STAFF_PATHS):
            services().limits.check_staff(current_staff() or f"address:{request.remote_addr}")

    @app.after_request
    def _headers(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        if response.mimetype == "text/html":
            ancestors = widget_ancestors if request.path == "/widget" else "'none'"
            response.headers["Content-Security-Policy"] = content_security_policy(ancestors)
            if ancestors == "'none'":  # for browsers without CSP frame-ancestors
                response.headers.setdefault("X-Frame-Options", "DENY")
        return response
