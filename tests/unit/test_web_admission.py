"""The message endpoint behind admission control: 429 busy at once, the waiting user's place, resends."""

from __future__ import annotations

import threading
import time

from tests.unit.web_support import make_app, script_profile_answer, sse_events, start


def _turns(client, cid, auth) -> list:
    return client.get(f"/v1/conversations/{cid}", headers=auth).get_json()["turns"]


def test_a_turn_that_would_wait_too_long_is_refused_at_once_with_nothing_stored(sqlite_url):
    app, llm, _ = make_app(sqlite_url, admission_capacity=1, admission_turn_s=30.0, admission_max_wait_s=20.0)
    admission = app.extensions["chops"].admission
    held = admission.enter("someone-else")  # a turn of another user holds the only place: 30 s to wait
    client = app.test_client()
    cid, auth = start(client)
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "我的上传上限是多少？"}, headers=auth)
    assert resp.status_code == 429
    body = resp.get_json()["error"]
    assert body["code"] == "busy" and "秒后重试" in body["message"]
    assert int(resp.headers["Retry-After"]) == body["retry_after"] >= 10
    assert _turns(client, cid, auth) == []  # nothing stored, and no model was asked (none is scripted)
    admission.leave(held)
    script_profile_answer(llm)
    again = client.post(f"/v1/conversations/{cid}/messages", json={"text": "What is my upload limit?"}, headers=auth)
    assert again.status_code == 200  # the place came free: the retry is answered


def test_a_waiting_turn_streams_its_place_then_the_answer(sqlite_url):
    app, llm, _ = make_app(sqlite_url, admission_capacity=1, admission_turn_s=5.0, admission_max_wait_s=20.0)
    admission = app.extensions["chops"].admission
    held = admission.enter("someone-else")
    script_profile_answer(llm)
    client = app.test_client()
    cid, auth = start(client)
    threading.Timer(0.5, admission.leave, args=(held,)).start()
    t0 = time.monotonic()
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "What is my upload limit?"},
                       headers={**auth, "Accept": "text/event-stream"})
    events = sse_events(resp.get_data(as_text=True))
    assert time.monotonic() - t0 >= 0.5  # it waited for the other turn
    queued = [data for name, data in events if name == "progress" and data["step"] == "queued"]
    assert queued == [{"step": "queued", "ahead": 0, "wait_s": 5, "message": "You are next, about 5 s."}]
    assert events[-1][0] == "answer"


def test_a_resent_message_is_answered_from_the_store_not_run_twice(sqlite_url):
    app, llm, _ = make_app(sqlite_url)
    script_profile_answer(llm, times=1)  # one turn's worth of model replies: a second run would fail
    client = app.test_client()
    cid, auth = start(client)
    headers = {**auth, "Idempotency-Key": "msg-7f3a"}
    first = client.post(f"/v1/conversations/{cid}/messages", json={"text": "What is my upload limit?"}, headers=headers)
    again = client.post(f"/v1/conversations/{cid}/messages", json={"text": "What is my upload limit?"}, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.get_json()["replayed"] is True
    assert again.get_json()["turn_id"] == first.get_json()["turn_id"]
    assert again.get_json()["reply"] == first.get_json()["reply"]
    streamed = client.post(f"/v1/conversations/{cid}/messages", json={"text": "What is my upload limit?"},
                           headers={**headers, "Accept": "text/event-stream"})
    assert sse_events(streamed.get_data(as_text=True)) == [("answer", again.get_json())]
    assert len(_turns(client, cid, auth)) == 1


def test_an_overlong_idempotency_key_is_a_clear_error(sqlite_url):
    app, _, _ = make_app(sqlite_url)
    client = app.test_client()
    cid, auth = start(client)
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "hi"},
                       headers={**auth, "Idempotency-Key": "k" * 129})
    assert resp.status_code == 400 and resp.get_json()["error"]["field"] == "Idempotency-Key"
