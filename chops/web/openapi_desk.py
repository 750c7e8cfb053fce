"""The OpenAPI paths of the support desk: the conversation's event stream and the staff API."""

from __future__ import annotations

from chops.web import schemas as s

_STAFF_AUTH = ((401, "staff_required: send X-Staff-Key (+ X-Staff-Name) or use a console session"),
               (403, "csrf_failed: a console session's POST needs X-CSRF-Token"))


def desk_paths(ref, json, errors, conv_id: dict, auth_errors: tuple) -> dict:
    """``paths`` entries of the desk, built with ``chops.web.openapi``'s helpers."""
    staff_security = [{"staffKey": []}, {"consoleSession": []}]

    def action(summary: str, description: str) -> dict:
        return {"post": {"summary": summary, "description": description, "security": staff_security,
                         "parameters": [conv_id],
                         "responses": {"200": json(s.StaffStateOut, "the new state"),
                                       **errors(*_STAFF_AUTH, (404, "conversation_not_found"),
                                                (409, "already_claimed (another member holds it) or "
                                                      "invalid_state (not possible in this state)"))}}}

    return {
        "/v1/conversations/{conversation_id}/events": {"get": {
            "summary": "The conversation's events as Server-Sent Events",
            "description": ("`id:` the event id, `event:` turn | user | staff | state, `data:` an EventOut. "
                            "Without `Last-Event-ID` the stream starts at the first event; with it, right after "
                            "that one. The stream ends after `CHOPS_EVENT_STREAM_S` seconds (reconnect with "
                            "Last-Event-ID); a `: keep-alive` comment comes every 15 s."),
            "security": [{"bearer": []}],
            "parameters": [conv_id, {"name": "Last-Event-ID", "in": "header", "required": False,
                                     "schema": {"type": "string"}}],
            "responses": {"200": {"description": "text/event-stream of EventOut",
                                  "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                          **errors(*auth_errors, (400, "invalid_field: Last-Event-ID is not an event id"))}}},
        "/v1/staff/conversations": {"get": {
            "summary": "The staff queue", "security": staff_security,
            "parameters": [{"name": "state", "in": "query", "required": False,
                            "schema": {"type": "string", "enum": ["waiting", "staff", "closed"]}}],
            "responses": {"200": json(s.QueueOut, "longest waiting first"),
                          **errors(*_STAFF_AUTH[:1], (400, "invalid_field: unknown state"))}}},
        "/v1/staff/conversations/{conversation_id}/claim": action(
            "Take a waiting conversation", "The user's messages now come to this member; 409 already_claimed "
            "when another member was faster."),
        "/v1/staff/conversations/{conversation_id}/release": action(
            "Give the conversation back to the agent", "The agent answers the next message and sees the "
            "messages exchanged with staff as history."),
        "/v1/staff/conversations/{conversation_id}/close": action(
            "Close the conversation", "Waiting or claimed (by this member) conversations only."),
        "/v1/staff/conversations/{conversation_id}/messages": {"post": {
            "summary": "Reply to the user", "security": staff_security, "parameters": [conv_id],
            "requestBody": {"required": True, "content": {"application/json": {"schema": ref(s.PostMessage)}}},
            "responses": {"201": json(s.EventOut, "the staff event, also sent on the user's event stream"),
                          **errors(*_STAFF_AUTH, (400, "malformed_json, missing_field or invalid_field"),
                                   (404, "conversation_not_found"), (413, "message_too_long"),
                                   (409, "already_claimed or invalid_state: claim it first"))}}},
    }
