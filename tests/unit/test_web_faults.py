"""The chat API's failure contract: dependency outages are 503s with stable codes and nothing stored;
streamed answer pieces are relayed as SSE ``delta`` events."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from chops import tables as t
from chops.pipeline import TurnResult
from tests.unit.web_support import make_app, sse_events, start


@pytest.fixture
def web(sqlite_url):
    app, llm, engine = make_app(sqlite_url)
    return app.test_client(), llm, engine


def _turn_count(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(t.turn)).scalar()


def test_a_database_outage_is_503_database_unavailable_json_and_stream(web, monkeypatch):
    client, _, engine = web
    cid, auth = start(client)
    store = client.application.extensions["chops"].store

    def down(*args, **kwargs):
        raise sa.exc.OperationalError("SELECT 1", {}, ConnectionRefusedError("Can't connect to MySQL server"))

    monkeypatch.setattr(store, "history", down)
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "hi"}, headers=auth)
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (503, "database_unavailable")
    stream = client.post(f"/v1/conversations/{cid}/messages?stream=1", json={"text": "hi"}, headers=auth)
    assert [(e, d["error"]["code"]) for e, d in sse_events(stream.get_data(as_text=True))] == [
        ("error", "database_unavailable")]
    assert _turn_count(engine) == 0
    monkeypatch.undo()  # the database is back: the same conversation works again without a restart
    assert client.get(f"/v1/conversations/{cid}", headers=auth).status_code == 200


def test_a_database_bug_is_still_a_500(web, monkeypatch):
    client, _, _ = web
    cid, auth = start(client)

    def bad(*args, **kwargs):
        raise sa.exc.ProgrammingError("SELECT nope", {}, Exception("syntax error"))

    monkeypatch.setattr(client.application.extensions["chops"].store, "history", bad)
    resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": "hi"}, headers=auth)
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (500, "internal_error")


def test_streamed_answer_pieces_are_relayed_as_delta_events(web, monkeypatch):
    client, _, _ = web
    cid, auth = start(client)
    agent = client.application.extensions["chops"].agent

    def handle(nickname, text, *, on_event=None, **kwargs):
        on_event("classify", {"iteration": 1, "route": "basic_info", "prompt": "staff only"})
        for piece in ("You are ", "a team leader."):
            on_event("delta", {"text": piece})
        return TurnResult(reply="You are a team leader.", route="basic_info", iterations=1)

    monkeypatch.setattr(agent, "handle", handle)
    stream = client.post(f"/v1/conversations/{cid}/messages?stream=1", json={"text": "Who am I?"}, headers=auth)
    events = sse_events(stream.get_data(as_text=True))
    assert events[:3] == [("progress", {"step": "classify", "iteration": 1, "route": "basic_info"}),
                          ("delta", {"text": "You are "}), ("delta", {"text": "a team leader."})]
    assert events[3][0] == "answer" and events[3][1]["reply"] == "You are a team leader."
