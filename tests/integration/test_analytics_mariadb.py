"""Analytics on real MariaDB (and SQLite) with the real USE embedder: the seeded conversations' figures,
the guide gaps grouped by meaning, and ratings replaced through the HTTP API."""

from __future__ import annotations

from datetime import date

import pytest
import sqlalchemy as sa

import chops.web.analytics as web_analytics
from apis.cphos.db import init_schema
from chops import tables as t
from chops.analytics import DateRange, compute
from chops.db import make_engine
from chops.guide_gaps import group_gaps
from chops.retrieval.embedders import UseNumpyEmbedder
from tests.unit.analytics_support import CEREMONY, CEREMONY_AGAIN, EXPECTED, LANGUAGE, NOW, seed
from tests.unit.web_support import STAFF_KEY, make_app, script_profile_answer, start


@pytest.fixture(scope="module")
def use():
    return UseNumpyEmbedder()


def test_every_figure_of_the_seeded_conversations(db_url, use):
    engine = make_engine(db_url)
    init_schema(engine)
    seed(engine)
    assert compute(engine, DateRange(date(2026, 3, 10), date(2026, 3, 12)), NOW, use) == EXPECTED
    engine.dispose()


def test_guide_gaps_group_rewordings_and_keep_other_topics_apart(use):
    questions = [CEREMONY, LANGUAGE, CEREMONY_AGAIN, "颁奖典礼几点开始？", "Can I switch the site to Chinese?",
                 "How do I export the marking results to Excel?"]
    groups = group_gaps(questions, use)
    assert groups[0] == {"question": CEREMONY, "count": 3, "examples": [CEREMONY_AGAIN, "颁奖典礼几点开始？"]}
    assert {g["question"] for g in groups[1:]} >= {LANGUAGE, "How do I export the marking results to Excel?"}
    assert sum(g["count"] for g in groups) == len(questions)
    assert all(CEREMONY_AGAIN not in g["examples"] for g in groups[1:])


@pytest.mark.mariadb
def test_rating_twice_on_mariadb_keeps_one_row_and_the_dashboard_counts_it(mariadb_url, monkeypatch):
    app, llm, engine = make_app(mariadb_url)
    client = app.test_client()
    cid, auth = start(client, "demo_leader")
    script_profile_answer(llm)
    turn_id = client.post(f"/v1/conversations/{cid}/messages", json={"text": "Am I approved?"},
                          headers=auth).get_json()["turn_id"]
    for thumbs in ("down", "up"):
        resp = client.post(f"/v1/conversations/{cid}/turns/{turn_id}/rating", json={"thumbs": thumbs}, headers=auth)
        assert resp.status_code == 200
    with engine.connect() as conn:
        assert conn.execute(sa.select(t.turn_rating.c.turn_id, t.turn_rating.c.thumbs)).all() == [(turn_id, "up")]
    today = web_analytics._utcnow().date().isoformat()
    body = client.get("/v1/staff/analytics", query_string={"from": today, "to": today},
                      headers={"X-Staff-Key": STAFF_KEY}).get_json()
    assert (body["conversations"], body["ratings"], body["thumbs_up_rate"]) == (1, {"up": 1, "down": 0}, 1.0)
    assert body["outcomes"]["resolved_by_agent"] == 1
