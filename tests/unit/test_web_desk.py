"""The desk over HTTP: 202 while staff have the conversation (no model call), the state in the
conversation, the events stream resumed with Last-Event-ID, the staff API and its error codes, the
agent answering again after a release, and the console's queue, claim, reply, release and close."""

from __future__ import annotations

import re

import pytest

from tests.unit.desk_support import HANDOFF_REPLY, desk_app, script_handoff, staff_headers
from tests.unit.web_support import STAFF_PASSWORD, make_app, script_profile_answer, sse_events, start


@pytest.fixture
def web(sqlite_url):
    app, llm, engine = make_app(sqlite_url, event_stream_s=0.3, event_poll_s=0.05)
    agent = desk_app(app)
    return app.test_client(), llm, agent


def handed_over(client, llm, nickname="demo_leader") -> tuple[str, dict]:
    cid, auth = start(client, nickname)
    script_handoff(llm)
    body = client.post(f"/v1/conversations/{cid}/messages", json={"text": "I need a person"},
                       headers=auth).get_json()
    assert body["route"] == "handoff" and body["reply"].startswith(HANDOFF_REPLY)
    return cid, auth


def events(client, cid, auth, last=None) -> list[tuple[str, dict]]:
    headers = {**auth, **({"Last-Event-ID": str(last)} if last is not None else {})}
    resp = client.get(f"/v1/conversations/{cid}/events", headers=headers)
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream"
    raw = resp.get_data(as_text=True)
    ids = [int(i) for i in re.findall(r"^id: (\d+)$", raw, re.M)]
    parsed = sse_events(raw)
    assert [p["id"] for _, p in parsed] == ids  # the SSE id is the payload's id
    return parsed


def test_while_staff_have_it_a_message_is_stored_for_them_and_no_model_is_called(web):
    client, llm, _ = web
    cid, auth = handed_over(client, llm)
    state = client.get(f"/v1/conversations/{cid}", headers=auth).get_json()["state"]
    assert (state["state"], state["staff"], state["staff_online"]) == ("waiting", None, False)
    calls = len(llm.calls)
    for accept in ("application/json", "text/event-stream"):  # the streaming variant answers 202 JSON too
        resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": f"hello ({accept})"},
                           headers={**auth, "Accept": accept})
        assert resp.status_code == 202 and resp.mimetype == "application/json"
        body = resp.get_json()
        assert body["handled_by"] == "staff" and body["state"]["state"] == "waiting"
        assert (body["event"]["kind"], body["event"]["text"]) == ("user", f"hello ({accept})")
    assert len(llm.calls) == calls
    assert client.post(f"/v1/staff/conversations/{cid}/claim", headers=staff_headers("erin")).status_code == 200
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "still there?"}, headers=auth)
    assert resp.status_code == 202 and resp.get_json()["state"]["staff"] == "Erin"
    assert len(llm.calls) == calls
    conv = client.get(f"/v1/conversations/{cid}", headers=auth).get_json()
    assert (conv["state"]["state"], conv["state"]["staff"], conv["state"]["staff_online"]) == ("staff", "Erin", True)
    assert [m["text"] for m in conv["messages"]] == ["hello (application/json)", "hello (text/event-stream)",
                                                     "still there?"]


def test_the_event_stream_resumes_after_the_last_event_id_without_loss_or_repeats(web):
    client, llm, _ = web
    cid, auth = handed_over(client, llm)
    first = events(client, cid, auth)
    assert [(k, p.get("to")) for k, p in first] == [("turn", None), ("state", "waiting")]
    assert first[0][1]["turn"]["reply"].startswith(HANDOFF_REPLY)
    last = first[-1][1]["id"]
    client.post(f"/v1/staff/conversations/{cid}/claim", headers=staff_headers("erin"))
    client.post(f"/v1/staff/conversations/{cid}/messages", json={"text": "Hi, Erin here."}, headers=staff_headers("erin"))
    client.post(f"/v1/conversations/{cid}/messages", json={"text": "Thanks!"}, headers=auth)
    resumed = events(client, cid, auth, last)
    assert [(k, p.get("text") or p.get("to")) for k, p in resumed] == [
        ("state", "staff"), ("staff", "Hi, Erin here."), ("user", "Thanks!")]
    assert resumed[0][1]["display_name"] == "Erin" and resumed[1][1]["display_name"] == "Erin"
    every = events(client, cid, auth)
    assert [p["id"] for _, p in every] == [p["id"] for _, p in first + resumed]  # nothing lost, nothing twice
    assert events(client, cid, auth, every[-1][1]["id"]) == []
    assert client.get(f"/v1/conversations/{cid}/events", headers={**auth, "Last-Event-ID": "x"}).get_json()[
        "error"]["code"] == "invalid_field"
    other_cid, other = start(client, "demo_vice")
    assert client.get(f"/v1/conversations/{cid}/events", headers=other).status_code == 403
    assert client.get(f"/v1/conversations/{cid}/events").get_json()["error"]["code"] == "token_missing"


def test_staff_api_errors_have_stable_codes(web):
    client, llm, _ = web
    cid, auth = handed_over(client, llm)
    url = f"/v1/staff/conversations/{cid}"
    assert client.get("/v1/staff/conversations").get_json()["error"]["code"] == "staff_required"
    assert client.get("/v1/staff/conversations", headers={"X-Staff-Key": "wrong"}).status_code == 401
    assert client.get("/v1/staff/conversations?state=agent", headers=staff_headers()).get_json()[
        "error"]["code"] == "invalid_field"
    resp = client.post(f"{url}/messages", json={"text": "hi"}, headers=staff_headers("erin"))
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (409, "invalid_state")  # claim first
    assert client.post(f"{url}/claim", headers=staff_headers("erin")).get_json()["state"] == "staff"
    resp = client.post(f"{url}/claim", headers=staff_headers("sam"))
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (409, "already_claimed")
    assert client.post(f"{url}/messages", json={"text": "me too"}, headers=staff_headers("sam")).get_json()[
        "error"]["code"] == "already_claimed"
    assert client.post(f"{url}/messages", json={"text": "  "}, headers=staff_headers("erin")).get_json()[
        "error"]["code"] == "invalid_field"
    assert client.post(f"{url}/messages", json={"text": "x" * 2001}, headers=staff_headers("erin")).status_code == 413
    resp = client.post(f"{url}/messages", json={"text": "Hello from Erin"}, headers=staff_headers("erin"))
    assert resp.status_code == 201 and resp.get_json()["kind"] == "staff"
    assert client.post("/v1/staff/conversations/nope/claim", headers=staff_headers()).get_json()[
        "error"]["code"] == "conversation_not_found"
    assert client.post(f"{url}/close", headers=staff_headers("erin")).get_json()["state"] == "closed"
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "hello?"}, headers=auth)
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (409, "conversation_closed")


def test_a_console_session_uses_the_staff_api_with_its_csrf_token(web):
    client, llm, _ = web
    cid, _ = handed_over(client, llm)
    client.post("/console/login", data={"name": "rita", "password": STAFF_PASSWORD})
    queue = client.get("/v1/staff/conversations").get_json()["conversations"]
    assert [q["conversation_id"] for q in queue] == [cid]
    resp = client.post(f"/v1/staff/conversations/{cid}/claim")
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (403, "csrf_failed")
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/console/desk/").get_data(as_text=True)).group(1)
    resp = client.post(f"/v1/staff/conversations/{cid}/claim", headers={"X-CSRF-Token": token})
    assert resp.get_json()["staff"] == "Rita"  # the display name


def test_after_a_release_the_agent_answers_again_and_sees_the_staff_messages(web):
    client, llm, agent = web
    cid, auth = handed_over(client, llm)
    staff = staff_headers("erin")
    client.post(f"/v1/staff/conversations/{cid}/claim", headers=staff)
    client.post(f"/v1/conversations/{cid}/messages", json={"text": "Which exam is current?"}, headers=auth)
    client.post(f"/v1/staff/conversations/{cid}/messages", json={"text": "The assistant can tell you."}, headers=staff)
    assert client.post(f"/v1/staff/conversations/{cid}/release", headers=staff).get_json()["state"] == "agent"
    script_profile_answer(llm)
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "What is my upload limit?"}, headers=auth)
    assert resp.status_code == 200 and resp.get_json()["reply"] == "demo_leader asked: What is my upload limit?"
    assert [(h.user_text, h.staff) for h in agent.seen[-1]][-2:] == [
        ("Which exam is current?", None), ("", "Erin")]
    executor_prompt = "\n".join(c for _, c in [c for c in llm.calls if c[0] == "executor"][-1][1])
    assert "Support staff (Erin): The assistant can tell you." in executor_prompt


def test_the_console_queue_claim_reply_release_and_close(web):
    client, llm, _ = web
    cid, auth = handed_over(client, llm)
    client.post("/console/login", data={"name": "erin", "password": STAFF_PASSWORD})
    page = client.get("/console/desk/").get_data(as_text=True)
    assert f'data-conversation="{cid}"' in page and "I need a person" not in page  # the hand-off request is no "want"
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    assert client.post(f"/console/desk/{cid}/claim", data={}).status_code == 400  # the CSRF check
    assert client.post(f"/console/desk/{cid}/claim", data={"csrf": token}).status_code == 302
    conv = client.get(f"/console/conversations/{cid}").get_data(as_text=True)
    assert "handled by <strong>erin</strong>" in conv and 'class="send-reply"' in conv
    client.post(f"/console/desk/{cid}/messages", data={"csrf": token, "text": "Hello, this is Erin."})
    stream = events(client, cid, auth)
    assert ("staff", "Hello, this is Erin.") in [(k, p.get("text")) for k, p in stream]
    assert "Hello, this is Erin." in client.get(f"/console/desk/fragments/{cid}").get_data(as_text=True)
    client.post(f"/console/desk/{cid}/release", data={"csrf": token})
    assert client.get(f"/v1/conversations/{cid}", headers=auth).get_json()["state"]["state"] == "agent"
    client.post(f"/console/desk/{cid}/release", data={"csrf": token})  # again: refused, told why
    assert "this needs staff" in client.get("/console/desk/").get_data(as_text=True)
    script_handoff(llm)
    handed = client.post(f"/v1/conversations/{cid}/messages", json={"text": "Person again"}, headers=auth)
    assert handed.get_json()["route"] == "handoff"
    client.post(f"/console/desk/{cid}/close", data={"csrf": token})
    assert client.get(f"/v1/conversations/{cid}", headers=auth).get_json()["state"]["state"] == "closed"
    assert f'data-conversation="{cid}"' in client.get("/console/desk/?state=closed").get_data(as_text=True)
