"""The widget's JSON API with Flask's test client, a real SQLite database and the scripted model."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from chops import tables as t
from chops.llm import LLMError
from tests.unit.pipeline_support import member
from tests.unit.web_support import (make_app, script_passed_write, script_profile_answer, script_queued_write,
                                    sse_events, start, user_token)


@pytest.fixture
def web(sqlite_url):
    app, llm, engine = make_app(sqlite_url)
    return app.test_client(), llm, engine


def turns(engine) -> list[dict]:
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.select(t.turn).order_by(t.turn.c.id)).mappings()]


def conversations(engine) -> list[dict]:
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.select(t.conversation)).mappings()]


def test_a_token_starts_a_conversation_for_its_user(web):
    client, _, engine = web
    resp = client.post("/v1/conversations", json={"token": user_token("demo_vice")})
    assert resp.status_code == 201
    body = resp.get_json()
    assert body["nickname"] == "demo_vice" and body["token"] and body["expires_at"] > 0
    assert [(c["id"], c["nickname"], c["channel"]) for c in conversations(engine)] == [
        (body["id"], "demo_vice", "widget")]


def test_a_message_is_answered_as_the_tokens_user_and_stored_with_its_trace(web):
    client, llm, engine = web
    cid, auth = start(client, "demo_busy_leader")
    script_profile_answer(llm)
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "How many problems are left?"},
                       headers=auth)
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    assert body["reply"] == "demo_busy_leader asked: How many problems are left?"
    assert (body["route"], body["seq"], body["queued"], body["committed"]) == ("basic_info", 1, False, False)
    [row] = turns(engine)
    assert (row["id"], row["user_text"], row["reply"]) == (body["turn_id"], "How many problems are left?",
                                                            body["reply"])
    trace = json.loads(row["trace_json"])
    assert [s["role"] for s in trace["steps"]] == ["profile", "classifier", "classifier", "executor", "verifier"]
    assert "trace" not in body  # the trace is for staff, not for the end user
    assert llm.pending() == {}


def test_the_body_cannot_choose_the_acting_user(web):
    client, llm, engine = web
    cid, auth = start(client, "demo_leader")
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "hi", "nickname": "demo_admin"},
                       headers=auth)
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "invalid_field"
    script_profile_answer(llm)
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "I am demo_admin, who am I?"},
                       headers=auth)
    assert resp.get_json()["reply"].startswith("demo_leader asked:")


def test_a_passed_write_is_committed_for_the_conversations_user(web):
    client, llm, engine = web
    cid, auth = start(client, "demo_leader")
    script_passed_write(llm, 40)
    body = client.post(f"/v1/conversations/{cid}/messages", json={"text": "Set my upload limit to 40"},
                       headers=auth).get_json()
    assert (body["committed"], body["outcome"], body["operation"]) == (True, "ok", "ChangeAllTypesUploadLimit")
    assert member(engine, "demo_leader")["limit"] == 40


def test_the_reply_streams_progress_then_the_answer(web):
    client, llm, engine = web
    cid, auth = start(client)
    script_profile_answer(llm)
    resp = client.post(f"/v1/conversations/{cid}/messages?stream=1", json={"text": "What is my role?"},
                       headers=auth)
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream"
    events = sse_events(resp.get_data(as_text=True))
    deltas = [d["text"] for e, d in events if e == "delta"]
    progress = [d for e, d in events if e == "progress"]
    assert [e for e, _ in events if e != "delta"] == ["progress"] * 4 + ["answer"]
    assert [d["step"] for d in progress] == ["classify", "execute", "verify", "reply"]
    answer = events[-1][1]
    assert answer["reply"] == "demo_leader asked: What is my role?" and answer["turn_id"] == turns(engine)[0]["id"]
    # the model-written answer streamed in pieces first (before the verifier's verdict)
    assert len(deltas) > 1 and "".join(deltas) == answer["reply"]
    assert [e for e, _ in events].index("delta") < [e for e, _ in events].index("answer")
    assert all("reason" not in d and "args" not in d for d in progress)  # staff-only details stay out


def test_accept_header_selects_the_stream_and_a_queued_write_says_so(web):
    client, llm, engine = web
    cid, auth = start(client)
    script_queued_write(llm, 40)
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "Set my upload limit to 40"},
                       headers={**auth, "Accept": "text/event-stream"})
    events = sse_events(resp.get_data(as_text=True))
    steps = [d["step"] for e, d in events if e == "progress"]
    assert steps.count("verify") == 5 and "commit" in steps
    answer = events[-1][1]
    assert answer["queued"] is True and answer["committed"] is False and answer["approval_id"]
    assert member(engine, "demo_leader")["limit"] == 20  # nothing written: staff decide
    with engine.connect() as conn:
        row = conn.execute(sa.select(t.approval)).mappings().one()
    assert (row["status"], row["conversation_id"], row["nickname"]) == ("pending", cid, "demo_leader")


def test_history_returns_the_turns_in_order(web):
    client, llm, _ = web
    cid, auth = start(client)
    script_profile_answer(llm, 2)
    for text in ("first?", "second?"):
        client.post(f"/v1/conversations/{cid}/messages", json={"text": text}, headers=auth)
    body = client.get(f"/v1/conversations/{cid}", headers=auth).get_json()
    assert body["nickname"] == "demo_leader"
    assert [(x["seq"], x["user_text"]) for x in body["turns"]] == [(1, "first?"), (2, "second?")]


def test_the_users_own_token_also_opens_the_conversation(web):
    client, _, _ = web
    cid, _ = start(client, "demo_leader")
    resp = client.get(f"/v1/conversations/{cid}", headers={"Authorization": f"Bearer {user_token('demo_leader')}"})
    assert resp.status_code == 200


@pytest.mark.parametrize("headers_for, status, code", [
    (lambda own, other: {}, 401, "token_missing"),
    (lambda own, other: {"Authorization": "Basic abc"}, 401, "token_missing"),
    (lambda own, other: {"Authorization": "Bearer nonsense"}, 401, "token_invalid"),
    (lambda own, other: {"Authorization": f"Bearer {user_token('demo_leader', ttl=-600)}"}, 401, "token_expired"),
    (lambda own, other: {"Authorization": f"Bearer {user_token('demo_admin')}"}, 403, "forbidden"),
    (lambda own, other: other, 403, "forbidden"),  # the same user's token for another conversation
])
def test_follow_up_calls_need_this_conversations_token(web, headers_for, status, code):
    client, llm, engine = web
    cid, own = start(client, "demo_leader")
    _, other = start(client, "demo_leader")
    for resp in (client.get(f"/v1/conversations/{cid}", headers=headers_for(own, other)),
                 client.post(f"/v1/conversations/{cid}/messages", json={"text": "hi"},
                             headers=headers_for(own, other))):
        assert (resp.status_code, resp.get_json()["error"]["code"]) == (status, code)
    assert turns(engine) == [] and llm.calls == []


def test_unknown_conversation_is_404(web):
    client, _, _ = web
    _, auth = start(client)
    for cid in ("no-such-id", "x" * 300):
        resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "hi"}, headers=auth)
        assert (resp.status_code, resp.get_json()["error"]["code"]) == (404, "conversation_not_found")


@pytest.mark.parametrize("kwargs, status, code", [
    ({"data": "{not json", "content_type": "application/json"}, 400, "malformed_json"),
    ({"json": ["a", "list"]}, 400, "malformed_json"),
    ({"data": "text=hi", "content_type": "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"),
    ({"json": {}}, 400, "missing_field"),
    ({"json": {"text": ""}}, 400, "invalid_field"),
    ({"json": {"text": "   \n"}}, 400, "invalid_field"),
    ({"json": {"text": 42}}, 400, "invalid_field"),
    ({"json": {"text": "x" * 2001}}, 413, "message_too_long"),
    ({"data": "{\"text\": \"" + "x" * 100_000 + "\"}", "content_type": "application/json"}, 413, "body_too_large"),
])
def test_bad_messages_get_a_4xx_code_and_write_nothing(web, kwargs, status, code):
    client, llm, engine = web
    cid, auth = start(client)
    resp = client.post(f"/v1/conversations/{cid}/messages", headers=auth, **kwargs)
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (status, code)
    assert turns(engine) == [] and llm.calls == []


def test_a_message_of_exactly_the_limit_is_accepted(sqlite_url):
    app, llm, engine = make_app(sqlite_url, max_message_chars=50)
    client = app.test_client()
    cid, auth = start(client)
    script_profile_answer(llm)
    assert client.post(f"/v1/conversations/{cid}/messages", json={"text": "y" * 50}, headers=auth).status_code == 200
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "y" * 51}, headers=auth)
    assert resp.status_code == 413 and resp.get_json()["error"]["limit"] == 50


@pytest.mark.parametrize("body, status, code", [
    ({}, 400, "missing_field"),
    ({"token": ""}, 400, "invalid_field"),
    ({"token": "forged.token"}, 401, "token_invalid"),
    ({"token": user_token("demo_leader", ttl=-600)}, 401, "token_expired"),
    ({"nickname": "demo_leader"}, 403, "demo_mode_off"),
    ({"token": user_token("demo_leader"), "extra": 1}, 400, "invalid_field"),
])
def test_bad_conversation_starts_create_nothing(web, body, status, code):
    client, _, engine = web
    resp = client.post("/v1/conversations", json=body)
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (status, code)
    assert conversations(engine) == []


def test_demo_mode_accepts_a_bare_nickname(sqlite_url):
    app, llm, engine = make_app(sqlite_url, demo_mode=True)
    client = app.test_client()
    resp = client.post("/v1/conversations", json={"nickname": "demo_arbiter"})
    assert resp.status_code == 201
    cid, token = resp.get_json()["id"], resp.get_json()["token"]
    script_profile_answer(llm)
    body = client.post(f"/v1/conversations/{cid}/messages", json={"text": "role?"},
                       headers={"Authorization": f"Bearer {token}"}).get_json()
    assert body["reply"] == "demo_arbiter asked: role?"
    assert client.post("/v1/conversations", json={"nickname": " "}).status_code == 400


def test_without_a_secret_the_chat_api_is_not_configured(sqlite_url):
    app, _, engine = make_app(sqlite_url, secret_key=None)
    resp = app.test_client().post("/v1/conversations", json={"token": user_token("demo_leader")})
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (503, "not_configured")
    assert conversations(engine) == []


def test_a_second_message_while_one_is_answered_is_409(web):
    client, llm, engine = web
    cid, auth = start(client)
    lock = client.application.extensions["chops"].conversation_lock(cid)
    with lock:
        resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "hi"}, headers=auth)
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (409, "conversation_busy")
    assert turns(engine) == []


def test_a_model_timeout_mid_turn_is_503_with_no_write_and_no_turn(web):
    client, llm, engine = web
    cid, auth = start(client)
    llm.enqueue("classifier", {"route": "something_else"}).enqueue("classifier", LLMError("timeout", "too slow"))
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "Set my limit to 40"}, headers=auth)
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (503, "model_unavailable")
    assert member(engine, "demo_leader")["limit"] == 20
    assert client.get(f"/v1/conversations/{cid}", headers=auth).get_json()["turns"] == []


def test_an_escaping_model_error_is_503_and_stores_no_turn(web, monkeypatch):
    client, _, engine = web
    cid, auth = start(client)
    agent = client.application.extensions["chops"].agent

    def boom(*args, **kwargs):
        raise LLMError("unreachable", "connection refused")

    monkeypatch.setattr(agent, "handle", boom)
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "hi"}, headers=auth)
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (503, "model_unavailable")
    stream = client.post(f"/v1/conversations/{cid}/messages?stream=1", json={"text": "hi"}, headers=auth)
    assert sse_events(stream.get_data(as_text=True)) == [
        ("error", {"error": {"code": "model_unavailable", "cause": "unreachable", "message": (
            "Sorry, the assistant is unavailable right now, so your request was not processed and nothing was "
            "changed. Please try again later or contact human support.")}})]
    chinese = client.post(f"/v1/conversations/{cid}/messages", json={"text": "上传上限改成40"}, headers=auth)
    assert chinese.status_code == 503 and chinese.get_json()["error"]["message"] == (
        "抱歉，助手暂时不可用，您的请求没有被处理，也没有做任何更改。请稍后再试，或联系人工客服。")
    assert turns(engine) == []


def test_unknown_routes_and_methods_are_json(web):
    client, _, _ = web
    assert client.get("/v1/nothing").get_json()["error"]["code"] == "not_found"
    resp = client.delete("/v1/conversations")
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (405, "method_not_allowed")


def test_the_api_allows_the_widget_on_another_origin(web):
    client, _, _ = web
    resp = client.options("/v1/conversations", headers={"Origin": "https://host.example",
                                                        "Access-Control-Request-Method": "POST"})
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    assert "Authorization" in resp.headers["Access-Control-Allow-Headers"]


def test_a_staff_note_stored_during_a_turn_does_not_lose_the_turn(web, monkeypatch):
    from chops.pipeline import TurnResult

    client, llm, engine = web
    cid, auth = start(client)
    svc = client.application.extensions["chops"]
    real_handle = svc.agent.handle

    def handle_while_staff_writes(*args, **kwargs):
        svc.store.append_turn(cid, "", TurnResult(reply="note from staff"))  # takes seq 1 meanwhile
        return real_handle(*args, **kwargs)

    monkeypatch.setattr(svc.agent, "handle", handle_while_staff_writes)
    script_profile_answer(llm)
    assert client.post(f"/v1/conversations/{cid}/messages", json={"text": "hi?"}, headers=auth).status_code == 200
    assert [(r["seq"], r["user_text"]) for r in turns(engine)] == [(1, ""), (2, "hi?")]


def test_the_agent_speaks_first_in_the_browsers_language(tmp_path):
    app, _, _ = make_app(f"sqlite:///{tmp_path / 'greet.db'}")
    client = app.test_client()
    english = client.get("/v1/greeting", headers={"Accept-Language": "en-GB,en;q=0.8"}).get_json()
    chinese = client.get("/v1/greeting", headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}).get_json()
    assert english == {"greeting": "Hi! How can I help you today?", "language": "en"}
    assert chinese["language"] == "zh" and "有什么可以帮您" in chinese["greeting"]
    assert client.get("/v1/greeting?lang=fr").get_json()["language"] == "en"  # a language we do not speak yet
