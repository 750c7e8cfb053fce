"""The OpenAPI 3.1 description of the JSON API, generated from the pydantic bodies in ``schemas``.

A test compares its paths and methods with the app's real routes, so it cannot drift silently.
"""

from __future__ import annotations

from functools import lru_cache

from chops.web import guides as g
from chops.web import schemas as s
from chops.web.openapi_desk import desk_paths

_REF = "#/components/schemas/{model}"
_MODELS = (s.CreateConversation, s.ConversationCreated, s.PostMessage, s.TurnOut, s.ConversationOut,
           s.HeldMessage, s.EventOut, s.QueueOut, s.StaffStateOut, s.ErrorBody, g.GuideList, g.GuideChange,
           s.RateTurn, s.RatingOut, s.AnalyticsOut, s.GreetingOut)


def _ref(model) -> dict:
    return {"$ref": _REF.format(model=model.__name__)}


def _json(model, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": _ref(model)}}}


def _errors(*codes: tuple[int, str]) -> dict:
    return {str(status): _json(s.ErrorBody, text) for status, text in codes}


_AUTH_ERRORS = ((401, "token_missing, token_invalid or token_expired"),
                (403, "forbidden: the token is for another user or conversation"),
                (404, "conversation_not_found"))
_BODY_ERRORS = ((400, "malformed_json, missing_field or invalid_field"),
                (415, "unsupported_media_type: send application/json"))


def _paths(max_chars: int) -> dict:
    conv_id = {"name": "conversation_id", "in": "path", "required": True, "schema": {"type": "string"}}
    stream = {"name": "stream", "in": "query", "required": False, "schema": {"type": "string", "enum": ["1"]},
              "description": "1 = answer as Server-Sent Events (same as `Accept: text/event-stream`)"}
    text_plain = {"content": {"text/plain": {"schema": {"type": "string"}}}}
    return {
        "/v1/greeting": {"get": {
            "summary": "The agent's opening line",
            "description": "In the language of `Accept-Language` (or `?lang=`); no sign-in, nothing stored.",
            "parameters": [{"name": "lang", "in": "query", "required": False, "schema": {"type": "string"}}],
            "responses": {"200": _json(s.GreetingOut, "the greeting")}}},
        "/v1/conversations": {"post": {
            "summary": "Start a conversation",
            "description": "The acting user is the nickname in the signed token (or `nickname` in demo mode).",
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref(s.CreateConversation)}}},
            "responses": {"201": _json(s.ConversationCreated, "created"),
                          **_errors(*_BODY_ERRORS, (401, "token_invalid or token_expired"),
                                    (403, "demo_mode_off: an unsigned nickname needs demo mode"),
                                    (503, "not_configured: no CHOPS_SECRET_KEY"))}}},
        "/v1/conversations/{conversation_id}": {"get": {
            "summary": "The conversation's history",
            "security": [{"bearer": []}],
            "parameters": [conv_id],
            "responses": {"200": _json(s.ConversationOut, "the conversation"), **_errors(*_AUTH_ERRORS)}}},
        "/v1/conversations/{conversation_id}/messages": {"post": {
            "summary": "Send a message and get the reply",
            "description": (f"`text` holds at most {max_chars} characters (setting `max_message_chars`). "
                            "With `Accept: text/event-stream` or `?stream=1` the reply streams as Server-Sent "
                            "Events: `progress` events (data: {\"step\": classify|execute|verify|commit|...}), "
                            "`delta` events (data: {\"text\": a piece of the answer}) while it is written, "
                            "then one `answer` event whose data is the TurnOut, or one `error` event. "
                            "503 `model_unavailable` / `database_unavailable`: nothing was stored; retry."),
            "security": [{"bearer": []}],
            "parameters": [conv_id, stream],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref(s.PostMessage)}}},
            "responses": {
                "200": {"description": "the answered turn",
                        "content": {"application/json": {"schema": _ref(s.TurnOut)},
                                    "text/event-stream": {"schema": {"type": "string"}}}},
                "202": _json(s.HeldMessage, "staff have the conversation (waiting or staff): stored for them, "
                                            "no model called; always JSON"),
                **_errors(*_BODY_ERRORS, *_AUTH_ERRORS, (409, "conversation_busy or conversation_closed"),
                          (413, "message_too_long"), (503, "model_unavailable / database_unavailable"))}}},
        **_guide_paths(),
        "/v1/conversations/{conversation_id}/turns/{turn_id}/rating": {"post": {
            "summary": "Rate one agent answer (thumbs up or down, an optional comment)",
            "description": "Only an agent answer of the token's own conversation; rating it again replaces "
                           "the earlier rating.",
            "security": [{"bearer": []}],
            "parameters": [conv_id, {"name": "turn_id", "in": "path", "required": True,
                                     "schema": {"type": "integer"}, "description": "`turn_id` of the answer"}],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref(s.RateTurn)}}},
            "responses": {"200": _json(s.RatingOut, "stored"),
                          **_errors(*_BODY_ERRORS, *_AUTH_ERRORS[:2],
                                    (404, "conversation_not_found, or turn_not_found: no agent answer with that "
                                          "id in this conversation"))}}},
        "/v1/staff/analytics": {"get": {
            "summary": "Outcomes, rates, reply times, cost, routes, operations and guide gaps over a date range",
            "description": "Conversations started from `from` to `to` (UTC days, both included; default the "
                           "last 7 days, at most 366). Staff only: `X-Staff-Key` or a console session. "
                           "`format=csv`: the same numbers as rows `metric,key,value`.",
            "security": [{"staffKey": []}],
            "parameters": [{"name": name, "in": "query", "required": False,
                            "schema": {"type": "string", "format": "date"}} for name in ("from", "to")]
                          + [{"name": "format", "in": "query", "required": False,
                              "schema": {"type": "string", "enum": ["json", "csv"]}}],
            "responses": {"200": {"description": "the figures",
                                  "content": {"application/json": {"schema": _ref(s.AnalyticsOut)},
                                              "text/csv": {"schema": {"type": "string"}}}},
                          **_errors((400, "invalid_date_range, or invalid_field (format)"),
                                    (401, "staff_required"))}}},
        **desk_paths(_ref, _json, _errors, conv_id, _AUTH_ERRORS),
        "/healthz": {"get": {"summary": "Liveness", "responses": {"200": {"description": "the process is up"}}}},
        "/readyz": {"get": {"summary": "Readiness: database and model reachable",
                            "responses": {"200": {"description": "ready"}, "503": {"description": "not ready"}}}},
        "/metrics": {"get": {"summary": "Prometheus metrics", "responses": {"200": {"description": "text format",
                                                                                    **text_plain}}}},
        "/openapi.json": {"get": {"summary": "This description", "responses": {"200": {"description": "OpenAPI"}}}},
    }


def _guide_paths() -> dict:
    upload = {"required": True, "content": {"multipart/form-data": {"schema": {
        "type": "object", "required": ["file"],
        "properties": {"file": {"type": "string", "format": "binary",
                                "description": "a PDF, Markdown (.md) or HTML (.html) file"},
                       "name": {"type": "string", "description": "POST only: the guide's name (default: the "
                                                                 "file's name)"}}}}}}
    name = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
    staff = {"security": [{"staffKey": []}]}
    auth = ((401, "staff_required"), (403, "csrf_failed: a console session must send X-CSRF-Token"),
            (503, "not_configured (no guide library) / embedder_unavailable"))
    refused = ((400, "missing_field (no file) or invalid_field (not a plain file name)"),
               (413, "too_large: over guide_max_bytes"), (415, "unsupported_type: not .pdf, .md or .html"),
               (422, "encrypted, no_text or unreadable"))
    waiting = {"202": _json(g.GuideChange, "still indexing after guide_wait_s; swapped in when done")}
    return {
        "/v1/staff/guides": {
            "get": {"summary": "The guides of the live index version", **staff,
                    "responses": {"200": _json(g.GuideList, "the live version"), **_errors(*auth)}},
            "post": {"summary": "Upload a new guide", **staff, "requestBody": upload,
                     "description": "A refused file changes nothing. Only the new guide is embedded; the new "
                                    "index version is swapped in for every worker.",
                     "responses": {"201": _json(g.GuideChange, "indexed and live"), **waiting,
                                   **_errors(*auth, *refused, (409, "guide_exists: use PUT to replace"))}}},
        "/v1/staff/guides/{name}": {
            "put": {"summary": "Replace a guide", **staff, "parameters": [name], "requestBody": upload,
                    "responses": {"200": _json(g.GuideChange, "indexed and live; the old text is gone"),
                                  **waiting, **_errors(*auth, *refused, (404, "guide_not_found"))}},
            "delete": {"summary": "Delete a guide: it is never retrieved or cited again", **staff,
                       "parameters": [name],
                       "responses": {"200": _json(g.GuideChange, "removed from the live version"), **waiting,
                                     **_errors(*auth, (404, "guide_not_found"))}}},
    }


@lru_cache(maxsize=4)
def build_spec(max_chars: int = 2000) -> dict:
    """The OpenAPI document (``max_chars`` is the configured message limit, shown in the text)."""
    components = {}
    for model in _MODELS:
        schema = model.model_json_schema(ref_template=_REF)
        components.update(schema.pop("$defs", {}))
        components[model.__name__] = schema
    return {
        "openapi": "3.1.0",
        "info": {"title": "CHOPS chat service", "version": "1.0.0",
                 "description": "Chat widget backend of the CHOPS customer-service agent. Errors are "
                                "`{\"error\": {\"code\", \"message\"}}` with stable codes."},
        "paths": _paths(max_chars),
        "components": {"schemas": components,
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                                                      "description": "the conversation token from POST "
                                                                     "/v1/conversations, or the user's token"},
                                           "staffKey": {"type": "apiKey", "in": "header", "name": "X-Staff-Key",
                                                        "description": "CHOPS_STAFF_API_KEY; X-Staff-Name "
                                                                       "names the acting member"},
                                           "consoleSession": {"type": "apiKey", "in": "cookie", "name": "session",
                                                              "description": "a signed-in console session (a POST "
                                                                             "also sends X-CSRF-Token)"}}},
    }
