"""In headless Chromium: the user rates an answer in the widget (thumbs down with a comment, then up), and
staff open the analytics dashboard, whose charts come from the service alone (no request leaves it).
Screenshots go to the test's tmp dir, and to $CHOPS_SCREENSHOTS_DIR when set."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa

import chops.web.analytics as web_analytics
from chops import tables as t
from tests.e2e.test_browser_widget import browser, host_site_jwt, sign_in  # noqa: F401 - the browser fixture
from tests.unit.analytics_support import CEREMONY, NOW, seed
from tests.unit.web_support import LiveServer, add_staff, make_app, script_profile_answer

pytestmark = pytest.mark.browser


@pytest.fixture
def shots(tmp_path):
    """shots(page, name): a full-page screenshot, kept in the tmp dir (and $CHOPS_SCREENSHOTS_DIR)."""
    extra = os.environ.get("CHOPS_SCREENSHOTS_DIR")

    def take(page, name: str) -> Path:
        path = tmp_path / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        if extra:
            Path(extra).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(extra) / path.name)
        return path

    return take


def rating_of(engine, turn_id: int) -> tuple | None:
    with engine.connect() as conn:
        return conn.execute(sa.select(t.turn_rating.c.thumbs, t.turn_rating.c.comment)
                            .where(t.turn_rating.c.turn_id == turn_id)).first()


def test_the_user_rates_an_answer_in_the_widget(sqlite_url, browser, shots):  # noqa: F811
    from playwright.sync_api import expect

    app, llm, engine = make_app(sqlite_url)
    script_profile_answer(llm)
    with LiveServer(app) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{srv.url}/widget?token={host_site_jwt('demo_leader')}")
        page.locator(".chops-launcher").click()
        page.fill(".chops-input", "What is my upload limit?")
        page.keyboard.press("Enter")
        answer = page.locator(".chops-bot").first
        expect(answer.locator(".chops-text")).to_have_text("demo_leader asked: What is my upload limit?")
        expect(answer.locator(".chops-rate")).to_be_visible()  # comes with the answer event (not the draft)
        with engine.connect() as conn:
            turn_id = conn.execute(sa.select(t.turn.c.id)).scalar_one()
        answer.get_by_role("button", name="Not helpful").click()
        expect(answer.locator(".chops-rate-status")).to_have_text("Thanks!")
        expect(answer.get_by_role("button", name="Not helpful")).to_have_attribute("aria-pressed", "true")
        comment = answer.locator(".chops-comment-input")
        expect(comment).to_be_focused()
        comment.fill("It should say 20.")
        shots(page, "outcomes-01-widget-thumbs-down")
        page.keyboard.press("Enter")
        expect(answer.locator(".chops-rate-status")).to_have_text("Thanks for telling us.")
        expect(answer.locator(".chops-comment")).to_have_count(0)
        assert tuple(rating_of(engine, turn_id)) == ("down", "It should say 20.")
        answer.get_by_role("button", name="Helpful", exact=True).click()  # changing one's mind replaces the rating
        expect(answer.get_by_role("button", name="Helpful", exact=True)).to_have_attribute("aria-pressed", "true")
        expect(answer.get_by_role("button", name="Not helpful")).to_have_attribute("aria-pressed", "false")
        assert tuple(rating_of(engine, turn_id)) == ("up", None)
        shots(page, "outcomes-02-widget-thumbs-up")


def test_the_dashboard_shows_charts_from_the_service_alone(sqlite_url, browser, shots, monkeypatch):  # noqa: F811
    from playwright.sync_api import expect

    app, _, engine = make_app(sqlite_url)
    seed(engine)
    add_staff(app)
    monkeypatch.setattr(web_analytics, "_utcnow", lambda: NOW)
    with LiveServer(app) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        requested: list[str] = []
        page.on("request", lambda req: requested.append(req.url))
        sign_in(page, srv.url)
        page.click("text=Analytics")
        page.fill("input[name=from]", "2026-03-10")
        page.fill("input[name=to]", "2026-03-12")
        page.click("text=Show")
        expect(page.locator(".kpis")).to_contain_text("22.2 %")
        charts = page.locator(".charts figure svg")
        expect(charts).to_have_count(6)
        for i in range(6):
            assert charts.nth(i).bounding_box()["height"] > 100  # drawn, not empty
        expect(page.locator(".charts")).to_contain_text(CEREMONY)
        shots(page, "outcomes-03-dashboard")
        assert requested and [u for u in requested if not u.startswith(srv.url)] == []
