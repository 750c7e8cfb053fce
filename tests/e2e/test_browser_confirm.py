"""The widget in a real browser: the agent speaks first, and a change that waits for the user's yes shows
Confirm and Cancel; Confirm sends the user's yes, which commits exactly the described change."""

from __future__ import annotations

import pytest

from tests.e2e.test_browser_widget import browser, host_site_jwt  # noqa: F401 - the fixture
from tests.unit.pipeline_support import member
from tests.unit.web_support import LiveServer, make_app, script_passed_write

pytestmark = pytest.mark.browser


def test_the_agent_speaks_first_and_confirm_commits_the_described_change(sqlite_url, browser):  # noqa: F811
    from playwright.sync_api import expect

    app, llm, engine = make_app(sqlite_url, confirm_writes="all")
    before = member(engine, "demo_leader")["limit"]
    with LiveServer(app) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 800}, locale="en-US")
        page.goto(f"{srv.url}/widget?token={host_site_jwt('demo_leader')}")
        page.click(".chops-launcher")
        expect(page.locator(".chops-greeting .chops-text")).to_have_text("Hi! How can I help you today?")
        script_passed_write(llm, limit=40)
        page.fill(".chops-input", "Please set my upload limit to 40")
        page.keyboard.press("Enter")
        asked = page.locator(".chops-bot").nth(0)
        expect(asked.locator(".chops-text")).to_contain_text("Shall I go ahead?", timeout=15000)
        expect(asked.locator(".chops-badge")).to_have_text("Nothing is changed until you confirm.")
        assert member(engine, "demo_leader")["limit"] == before  # described, not written
        llm.enqueue("classifier", {"answer": "yes_go_ahead"})
        asked.locator(".chops-confirm-yes").click()
        expect(page.locator(".chops-user .chops-text").nth(1)).to_have_text("Yes, go ahead.")
        expect(page.locator(".chops-bot").nth(1).locator(".chops-text")).to_contain_text("Done", timeout=15000)
        expect(asked.locator(".chops-confirm")).to_have_count(0)
    assert member(engine, "demo_leader")["limit"] == 40
    # The yes went through the model like any message: it was asked what the reply means.
    assert any(role == "classifier" and "Yes, go ahead." in msgs[-1][1] for role, msgs, _ in llm.calls)
