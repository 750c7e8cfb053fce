"""The OpenAPI 3.1 description of the JSON API, generated from the pydantic bodies in ``schemas``.

A test compares its paths and methods with the app's real routes, so it cannot drift silently.
"""

from __future__ import annotations

from functools import lru_cache

from chops.web import schemas as s

_REF = "#/components/schemas/{model}"
_MODELS = (s.CreateConversation, s.ConversationCreated, s.PostMessage, s.TurnOut, s.ConversationOut,
           s.ErrorBody)


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
                **_errors(*_BODY_ERRORS, *_AUTH_ERRORS, (409, "conversation_busy"),
                          (413, "message_too_long"), (503, "model_unavailable / database_unavailable"))}}},
        "/healthz": {"get": {"summary": "Liveness", "responses": {"200": {"description": "the process is up"}}}},
        "/readyz": {"get": {"summary": "Readiness: database and model reachable",
                            "responses": {"200": {"description": "ready"}, "503": {"description": "not ready"}}}},
        "/metrics": {"get": {"summary": "Prometheus metrics", "responses": {"200": {"description": "text format",
                                                                                    **text_plain}}}},
        "/openapi.json": {"get": {"summary": "This description", "responses": {"200": {"description": "OpenAPI"}}}},
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
                                                                     "/v1/conversations, or the user's token"}}},
    }
