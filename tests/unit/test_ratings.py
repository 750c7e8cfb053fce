"""Rating an answer: ``POST /v1/conversations/<id>/turns/<turn_id>/rating`` with the user's own token, only
their own conversation's agent answers, re-rating replaces, and every refusal has its stable code."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from chops import tables as t
from tests.unit.web_support import make_app, script_profile_answer, start


@pytest.fixture
def chat(sqlite_url):
    app, llm, engine = make_app(sqlite_url)
    client = app.test_client()
    cid, auth = start(client, "demo_leader")
    script_profile_answer(llm)
    turn = client.post(f"/v1/conversations/{cid}/messages", json={"text": "What is my upload limit?"},
                       headers=auth).get_json()
    return client, llm, engine, cid, auth, turn["turn_id"]


def ratings(engine) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.select(t.turn_rating.c.turn_id, t.turn_rating.c.thumbs,
                                                         t.turn_rating.c.comment))]


def rate(client, cid, turn_id, auth, body):
    return client.post(f"/v1/conversations/{cid}/turns/{turn_id}/rating", json=body, headers=auth)


def test_the_user_rates_their_answer_and_a_second_rating_replaces_the_first(chat):
    client, _, engine, cid, auth, turn_id = chat
    resp = rate(client, cid, turn_id, auth, {"thumbs": "up"})
    assert resp.status_code == 200 and resp.get_json() == {"turn_id": turn_id, "thumbs": "up", "comment": None}
    assert resp.headers["Access-Control-Allow-Origin"] == "*"  # the widget calls it from the host site
    assert ratings(engine) == [(turn_id, "up", None)]
    resp = rate(client, cid, turn_id, auth, {"thumbs": "down", "comment": "It gave my old limit."})
    assert resp.status_code == 200
    assert ratings(engine) == [(turn_id, "down", "It gave my old limit.")]


@pytest.mark.parametrize("body,code", [
    ({"thumbs": "sideways"}, "invalid_field"),
    ({"thumbs": 1}, "invalid_field"),
    ({}, "missing_field"),
    ({"thumbs": "up", "comment": "x" * 1001}, "invalid_field"),
    ({"thumbs": "up", "stars": 5}, "invalid_field"),
])
def test_a_bad_rating_is_refused_and_stores_nothing(chat, body, code):
    client, _, engine, cid, auth, turn_id = chat
    resp = rate(client, cid, turn_id, auth, body)
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == code
    assert ratings(engine) == []


def test_another_users_conversation_is_forbidden(chat):
    client, _, engine, cid, _, turn_id = chat
    _, other_auth = start(client, "demo_vice")
    resp = rate(client, cid, turn_id, other_auth, {"thumbs": "down"})
    assert resp.status_code == 403 and resp.get_json()["error"]["code"] == "forbidden"
    resp = rate(client, cid, turn_id, {}, {"thumbs": "down"})
    assert resp.status_code == 401 and resp.get_json()["error"]["code"] == "token_missing"
    assert ratings(engine) == []


def test_only_an_agent_answer_of_this_conversation_can_be_rated(chat):
    client, llm, engine, cid, auth, turn_id = chat
    other_cid, other_auth = start(client, "demo_leader")  # the same user's other conversation
    resp = rate(client, other_cid, turn_id, other_auth, {"thumbs": "up"})
    assert resp.status_code == 404 and resp.get_json()["error"]["code"] == "turn_not_found"
    resp = rate(client, cid, turn_id + 1000, auth, {"thumbs": "up"})
    assert resp.status_code == 404 and resp.get_json()["error"]["code"] == "turn_not_found"
    # A staff decision appended to the conversation is not the agent's answer.
    with engine.begin() as conn:
        staff_turn = conn.execute(t.turn.insert().values(conversation_id=cid, seq=9, created_at=sa.func.now(),
                                                         user_text="", reply="Staff approved it.")).inserted_primary_key[0]
    resp = rate(client, cid, staff_turn, auth, {"thumbs": "up"})
    assert resp.status_code == 404 and resp.get_json()["error"]["code"] == "turn_not_found"
    resp = rate(client, "no-such-conversation", turn_id, auth, {"thumbs": "up"})
    assert resp.status_code == 404 and resp.get_json()["error"]["code"] == "conversation_not_found"
    assert ratings(engine) == []


def test_the_embeddable_script_carries_the_rating_part(chat):
    client = chat[0]
    resp = client.get("/widget.js")
    script = resp.get_data(as_text=True)
    assert resp.status_code == 200 and resp.mimetype == "text/javascript"
    assert script.index("window.ChopsRating = {attach: attach}") < script.index("window.ChopsWidget = {")
    assert client.get("/widget.js", headers={"If-None-Match": resp.headers["ETag"]}).status_code == 304
