"""Outcomes and analytics on SQLite: seeded conversations whose outcomes are known (tests/unit/analytics_support.py),
every figure against its hand-computed value, date-range edges, CSV = JSON, staff-only access, the dashboard's
charts, and the outcome gauges in /metrics."""

from __future__ import annotations

import csv
import io
import re
from datetime import date, timedelta

import numpy as np
import pytest

import chops.web.analytics as web_analytics
from chops.analytics import DateRange, compute
from chops.outcomes import day_range, outcomes
from chops.web.schemas import AnalyticsOut
from tests.unit.analytics_support import CEREMONY, CEREMONY_AGAIN, EXPECTED, LANGUAGE, NOW, OUTCOME_OF, seed
from tests.unit.web_support import STAFF_KEY, STAFF_PASSWORD, add_staff, make_app

STAFF = {"X-Staff-Key": STAFF_KEY}
RANGE = {"from": "2026-03-10", "to": "2026-03-12"}


class TopicEmbedder:
    """A stand-in for USE in unit tests: one axis per topic word (the real embedder is tested on MariaDB)."""

    TOPICS = ("ceremony", "language", "upload")

    def embed(self, texts):
        rows = [[float(word in text.lower()) for word in self.TOPICS] + [0.01] for text in texts]
        return np.asarray(rows, dtype=np.float32) / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture
def web(sqlite_url, monkeypatch):
    app, _, engine = make_app(sqlite_url)
    app.extensions["chops"].index.embedder = TopicEmbedder()
    monkeypatch.setattr(web_analytics, "_utcnow", lambda: NOW)  # the clock the seeded outcomes are known at
    seeder = seed(engine)
    return app.test_client(), engine, seeder


def test_every_conversation_gets_its_known_outcome(web):
    _, engine, seeder = web
    got = {c.id: c.outcome for c in outcomes(engine, *day_range(date(2026, 3, 9), date(2026, 3, 13)), NOW)}
    expected = {seeder.ids[k]: o for k, o in OUTCOME_OF.items()}
    expected.update({seeder.ids["J"]: "resolved_by_agent", seeder.ids["K"]: "resolved_by_agent"})
    assert got == expected  # L (no message) and M (an eval run) are not counted


def test_waiting_turns_abandoned_when_the_window_passes(web):
    _, engine, seeder = web
    convs = outcomes(engine, *day_range(date(2026, 3, 12), date(2026, 3, 12)), NOW, timedelta(hours=12))
    assert {c.id: c.outcome for c in convs}[seeder.ids["G"]] == "abandoned"  # 15 h 55 min > 12 h
    convs = outcomes(engine, *day_range(date(2026, 3, 12), date(2026, 3, 12)), NOW, timedelta(hours=48))
    assert {c.id: c.outcome for c in convs}[seeder.ids["F"]] == "waiting"  # 28 h 58 min < 48 h


def test_the_analytics_json_has_every_hand_computed_figure(web):
    client, _, _ = web
    resp = client.get("/v1/staff/analytics", query_string=RANGE, headers=STAFF)
    assert resp.status_code == 200
    body = resp.get_json()
    assert body == EXPECTED
    AnalyticsOut.model_validate(body)  # the documented schema (OpenAPI) describes it


def test_the_csv_carries_the_same_numbers_as_the_json(web):
    client, _, _ = web
    resp = client.get("/v1/staff/analytics", query_string={**RANGE, "format": "csv"}, headers=STAFF)
    assert resp.status_code == 200 and resp.mimetype == "text/csv"
    assert "chops-analytics-2026-03-10-2026-03-12.csv" in resp.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(resp.get_data(as_text=True))))
    flat = {(r["metric"], r["key"]): r["value"] for r in rows}
    for name, value in EXPECTED.items():
        if isinstance(value, dict) and name != "by_day":
            assert {k: int(flat[(name, k)]) for k in value} == value
        elif name not in ("guide_gaps", "by_day"):
            assert flat[(name, "")] == str(value)
    assert flat[("guide_gaps", CEREMONY)] == "2" and flat[("guide_gaps", LANGUAGE)] == "1"
    assert flat[("by_day.failed", "2026-03-11")] == "2" and flat[("by_day.waiting", "2026-03-12")] == "1"
    assert len(rows) == 9 + 5 + 2 + 1 + 4 + 2 + 2 + 15  # scalars, outcomes, ratings, turns, routes, ops, gaps, days


@pytest.mark.parametrize("start,end,conversations", [
    ("2026-03-09", "2026-03-09", 1),  # J at 23:59:59 is the 9th's
    ("2026-03-13", "2026-03-13", 1),  # K at 00:00:00 is the 13th's
    ("2026-03-12", "2026-03-12", 3),  # F, G, H; L has no message
    ("2026-03-10", "2026-03-10", 3),  # A, N, B
    ("2026-03-14", "2026-03-20", 0),
])
def test_date_range_edges(web, start, end, conversations):
    client, _, _ = web
    body = client.get("/v1/staff/analytics", query_string={"from": start, "to": end}, headers=STAFF).get_json()
    assert body["conversations"] == conversations
    assert sum(sum(day.values()) for day in body["by_day"].values()) == conversations


def test_an_empty_range_has_null_rates_not_errors(web):
    client, _, _ = web
    body = client.get("/v1/staff/analytics", query_string={"from": "2026-04-01", "to": "2026-04-02"},
                      headers=STAFF).get_json()
    assert body["conversations"] == 0 and body["guide_gaps"] == [] and body["routes"] == {}
    assert [body[k] for k in ("auto_resolution_rate", "handoff_rate", "thumbs_up_rate", "reply_seconds_p50",
                              "cost_per_conversation")] == [None] * 5


def test_without_dates_the_last_seven_days(web):
    client, _, _ = web
    body = client.get("/v1/staff/analytics", headers=STAFF).get_json()
    assert (body["from"], body["to"]) == ("2026-03-07", "2026-03-13")
    assert body["conversations"] == 11  # J, the nine, K


@pytest.mark.parametrize("query", [{"from": "2026-13-01", "to": "2026-03-12"}, {"from": "yesterday"},
                                   {"from": "2026-03-12", "to": "2026-03-10"}, {"from": "2024-01-01", "to": "2026-03-12"},
                                   {"from": "2026-03-10'; DROP TABLE chops_turn; --"}])
def test_bad_dates_are_a_stable_400(web, query):
    client, _, _ = web
    resp = client.get("/v1/staff/analytics", query_string=query, headers=STAFF)
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "invalid_date_range"


def test_a_bad_format_is_refused(web):
    client, _, _ = web
    resp = client.get("/v1/staff/analytics", query_string={**RANGE, "format": "xml"}, headers=STAFF)
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "invalid_field"


def test_analytics_are_for_staff_only(web):
    client, _, _ = web
    for headers in ({}, {"X-Staff-Key": "wrong"}):
        resp = client.get("/v1/staff/analytics", query_string=RANGE, headers=headers)
        assert resp.status_code == 401 and resp.get_json()["error"]["code"] == "staff_required"
    add_staff(client.application)
    assert client.post("/console/login", data={"name": "sam", "password": STAFF_PASSWORD}).status_code == 302
    assert client.get("/v1/staff/analytics", query_string=RANGE).get_json() == EXPECTED  # a console session


def test_the_dashboard_draws_the_figures_as_charts_with_nothing_from_the_internet(web):
    client, _, _ = web
    assert client.get("/console/analytics").status_code == 302  # not signed in: the login page
    html = client.get("/console/analytics", query_string=RANGE, headers=STAFF).get_data(as_text=True)
    assert html.count("<svg") == 6  # per day, outcomes, rates, routes, operations, guide gaps
    assert "22.2 %" in html and "33.3 %" in html and "66.7 %" in html and "3.0 s / 9.0 s" in html
    assert "$0.0222" in html and CEREMONY in html and CEREMONY_AGAIN in html
    # Each chart's bars carry the numbers: the outcomes chart labels its five bars 2, 2, 1, 3, 1.
    outcomes_svg = html[html.index("<figcaption>Outcomes</figcaption>"):]
    outcomes_svg = outcomes_svg[:outcomes_svg.index("</svg>")]
    assert re.findall(r">(\d+)</text>", outcomes_svg)[-5:] == ["2", "2", "1", "3", "1"]
    # Everything the page loads or links is on this service (a path) or inside the page (#id).
    links = re.findall(r'(?:src|href)\s*=\s*["\']([^"\']*)', html) + re.findall(r"url\(([^)]*)\)", html)
    assert links and [u for u in links if not u.startswith(("/", "#"))] == []
    assert "@import" not in html
    assert "<script" not in html.replace('<script src="/static/console.js"></script>', "")


def test_user_text_in_a_chart_is_escaped(sqlite_url, monkeypatch):
    app, _, engine = make_app(sqlite_url)
    monkeypatch.setattr(web_analytics, "_utcnow", lambda: NOW)
    from tests.unit.analytics_support import Seeder

    s = Seeder(engine)
    s.conversation("X", NOW - timedelta(hours=1))
    s.turn("X", NOW - timedelta(minutes=59), "<script>alert(1)</script> costs $5 and $6?", "guide", passed=False)
    html = app.test_client().get("/console/analytics", headers=STAFF).get_data(as_text=True)
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)" in html


def test_the_dashboard_reports_bad_dates(web):
    client, _, _ = web
    resp = client.get("/console/analytics", query_string={"from": "2026-03-12", "to": "2026-03-01"}, headers=STAFF)
    assert resp.status_code == 400 and "is after" in resp.get_data(as_text=True)


def test_outcome_gauges_in_metrics_are_read_from_the_database(web, monkeypatch):
    client, engine, seeder = web
    monkeypatch.setattr(web_analytics, "_utcnow", lambda: NOW - timedelta(hours=4))  # 03-13 08:00
    text = client.get("/metrics").get_data(as_text=True)
    gauges = dict(re.findall(r'chops_conversation_outcomes\{outcome="(\w+)"\} (\S+)', text))
    # Started in the 24 h before 03-13 08:00: H (staff), G (waiting, 12 h), K (agent); F at 07:00 on the 12th is out.
    assert gauges == {"resolved_by_agent": "1.0", "resolved_by_staff": "1.0", "abandoned": "0.0", "failed": "0.0",
                      "waiting": "1.0"}
    assert 'chops_answer_ratings{thumbs="up"} 0.0' in text


def test_compute_without_an_embedder_groups_identical_questions_only(web):
    _, engine, _ = web
    figures = compute(engine, DateRange(date(2026, 3, 10), date(2026, 3, 12)), NOW, embedder=None)
    assert [g["question"] for g in figures["guide_gaps"]] == [LANGUAGE, CEREMONY, CEREMONY_AGAIN]


def test_a_question_that_looks_like_a_formula_stays_text_in_the_csv():
    from chops.analytics import to_csv

    gaps = [{"question": '=HYPERLINK("http://x.example","click")', "count": 1, "examples": []},
            {"question": "How do I log in?", "count": 1, "examples": []}]
    rows = list(csv.reader(io.StringIO(to_csv({"guide_gaps": gaps}))))
    assert rows[1:] == [["guide_gaps", '\'=HYPERLINK("http://x.example","click")', "1"],
                        ["guide_gaps", "How do I log in?", "1"]]
