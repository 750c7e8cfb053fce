"""JSON errors with stable codes: raised anywhere in a request, rendered by one handler.

Every error body is ``{"error": {"code": "<stable code>", "message": "<for people>"}}``. A refused
guide file changes nothing: the index keeps its version and content. Codes:

| status | code | when |
|---|---|---|
| 400 | ``malformed_json`` | the body is not a JSON object |
| 400 | ``missing_field`` / ``invalid_field`` | a required field is absent / has the wrong type or is empty |
| 400 | ``invalid_date_range`` | analytics ``from``/``to`` malformed, reversed or longer than a year |
| 401 | ``token_missing`` / ``token_invalid`` / ``token_expired`` | user authentication failed |
| 401 | ``staff_required`` | a staff endpoint without the staff key or a console session |
| 403 | ``forbidden`` | the token belongs to another user or conversation |
| 403 | ``demo_mode_off`` | an unsigned ``nickname`` was sent while demo mode is off |
| 403 | ``csrf_failed`` | a console session's staff POST (guides, desk) without its CSRF token (``X-CSRF-Token``) |
| 404 | ``conversation_not_found`` / ``not_found`` | unknown conversation id / route |
| 404 | ``guide_not_found`` | no guide of that name |
| 404 | ``turn_not_found`` | a rating for a turn that is not an agent answer of that conversation |
| 405 | ``method_not_allowed`` | |
| 409 | ``conversation_busy`` | another message of the same conversation is being answered |
| 409 | ``guide_exists`` | a guide upload (POST) under a name that exists: replace it with PUT |
| 409 | ``already_claimed`` | another staff member holds the conversation |
| 409 | ``invalid_state`` | the conversation's state does not allow that (e.g. releasing one nobody claimed) |
| 409 | ``conversation_closed`` | a message to a closed conversation (start a new one) |
| 413 | ``message_too_long`` / ``body_too_large`` | text over ``max_message_chars`` / body over the limit |
| 413 | ``too_large`` | a guide file over the guide_max_bytes setting |
| 415 | ``unsupported_media_type`` | the body is not ``application/json`` |
| 429 | ``busy`` | too many turns are waiting for the model: expected wait over the limit; ``Retry-After``; nothing stored |
| 429 | ``rate_limited`` | a rate limit (per user, conversation, service or staff member) is used up; ``Retry-After`` |
| 429 | ``too_many_conversations`` | the user already has the most open conversations allowed |
| 429 | ``signin_throttled`` | too many failed staff sign-ins for that name or address; not checked; ``Retry-After`` |
| 415 | ``unsupported_type`` | a guide file that is not PDF (.pdf), Markdown (.md) or HTML (.html) |
| 422 | ``encrypted`` / ``no_text`` / ``unreadable`` | a guide file with a password / without extractable text / damaged or not UTF-8 |
| 503 | ``model_unavailable`` | the model is down, timed out or gave unusable output; nothing was stored |
| 503 | ``database_unavailable`` | the database cannot be reached; nothing half-written, retry later |
| 503 | ``jwks_unavailable`` | the host site's JWKS URL cannot be reached to verify a token; retry later |
| 503 | ``not_configured`` | no ``CHOPS_SECRET_KEY`` to verify tokens with / no guide library |
| 503 | ``embedder_unavailable`` | the embedding model failed during a guide re-index; the guides are unchanged |
| 500 | ``internal_error`` | a bug; logged with its traceback (should never be seen) |
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException

log = logging.getLogger(__name__)

# Werkzeug's own HTTP errors, mapped to our stable codes.
_HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
               413: "body_too_large", 415: "unsupported_media_type"}


class ApiError(Exception):
    """An error the client can fix (4xx) or a dependency outage (503), with a stable ``code``."""

    def __init__(self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None, **extra):
        """``headers`` go on the response (e.g. ``Retry-After``); ``extra`` goes into the body."""
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.extra = extra

    def body(self) -> dict:
        """The JSON body of this error."""
        return {"error": {"code": self.code, "message": self.message, **self.extra}}


def retry_later(code: str, message: str, seconds: int) -> ApiError:
    """A ``429`` refusal the client may repeat after ``seconds``: ``Retry-After`` and ``retry_after`` in the body."""
    return ApiError(429, code, message, headers={"Retry-After": str(seconds)}, retry_after=seconds)


def database_unavailable(exc: sa.exc.DBAPIError) -> ApiError | None:
    """The 503 for a database that is down (a lost or refused connection); None for other database
    errors, which are bugs (500). A transaction cut off this way was rolled back by the database."""
    if exc.connection_invalidated or isinstance(exc, (sa.exc.OperationalError, sa.exc.InterfaceError)):
        return ApiError(503, "database_unavailable", "the database is unavailable; nothing was changed, retry later")
    return None


def error_response(status: int, code: str, message: str, **extra):
    """A Flask response carrying one JSON error."""
    resp = jsonify(ApiError(status, code, message, **extra).body())
    resp.status_code = status
    return resp


def _wants_json() -> bool:
    # The console is HTML; everything else (API, ops) answers in JSON.
    return not request.path.startswith("/console") or request.accept_mimetypes.best == "application/json"


def register_error_handlers(app: Flask) -> None:
    """Render ``ApiError`` and every HTTP error as JSON; turn stray exceptions into a logged 500."""

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError):
        resp = error_response(exc.status, exc.code, exc.message, **exc.extra)
        resp.headers.update(exc.headers)
        return resp

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):
        if not _wants_json():
            return exc
        status = exc.code or 500
        return error_response(status, _HTTP_CODES.get(status, f"http_{status}"), exc.description or exc.name)

    @app.errorhandler(sa.exc.DBAPIError)
    def _database_error(exc: sa.exc.DBAPIError):
        err = database_unavailable(exc)
        if err is None:
            return _unexpected(exc)
        log.warning("database unavailable on %s %s: %s", request.method, request.path, exc.orig)
        return error_response(err.status, err.code, err.message)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        log.exception("unhandled error on %s %s", request.method, request.path)
        return error_response(500, "internal_error", "internal error (logged on the server)")
