"""The whole hand-off in a real browser (headless Chromium via Playwright): the widget asks for a
person, the console's queue shows it and a member claims it and replies, the reply appears in the
widget with the member's name, the user answers (held for staff, no model call), staff release,
and the agent answers again. Also at a phone's width. Screenshots go to /work/shots-handoff/ when
that folder exists (outside the repository), else to the test's tmp dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from chops.desk.notices import LATER, OFFER
from tests.e2e.test_browser_widget import PHONE, browser, host_site_jwt, sign_in  # noqa: F401 - the fixture
from tests.unit.desk_support import HANDOFF_REPLY, desk_app, script_handoff, staff_headers
from tests.unit.pipeline_support import to_guide, verdict
from tests.unit.web_support import LiveServer, make_app, script_profile_answer

pytestmark = pytest.mark.browser
SHOTS = Path("/work/shots-handoff")


@pytest.fixture
def shoot(tmp_path):
    where = SHOTS if SHOTS.is_dir() else tmp_path

    def take(page, name: str) -> None:
        page.screenshot(path=str(where / f"{name}.png"))

    return take


def test_hand_off_claim_reply_answer_release_and_the_agent_again(sqlite_url, browser, shoot):  # noqa: F811
    from playwright.sync_api import expect

    app, llm, engine = make_app(sqlite_url, event_poll_s=0.1)
    agent = desk_app(app)
    with LiveServer(app) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{srv.url}/widget?token={host_site_jwt('demo_leader')}")
        page.locator(".chops-launcher").click()
        for _ in range(2):  # a guide answer the verifier rejects (the repeat reuses the verdict): unverified
            to_guide(llm)
            llm.enqueue("executor", {"source": 1, "answer": "Maybe at the end of the month."})
        llm.enqueue("verifier", verdict(2, "the excerpt does not say"))
        page.fill(".chops-input", "When is the deadline for the appeal of a mark?")
        page.keyboard.press("Enter")
        expect(page.locator(".chops-bot").nth(0).locator(".chops-text")).to_contain_text(OFFER)
        script_handoff(llm)
        page.fill(".chops-input", "Can I talk to a real person please?")
        page.keyboard.press("Enter")
        handoff = page.locator(".chops-bot").nth(1)
        expect(handoff.locator(".chops-text")).to_contain_text(HANDOFF_REPLY)
        expect(handoff.locator(".chops-text")).to_contain_text(LATER)  # nobody from support was active
        status = page.locator(".chops-status")
        expect(status).to_contain_text("a person will reply here")
        expect(status).to_contain_text("No one from support is online")
        shoot(page, "01-widget-waiting-desktop")
        cid = page.locator(".chops-widget").get_attribute("data-conversation-id")

        staff = browser.new_page(viewport={"width": 1280, "height": 800})
        sign_in(staff, srv.url, "erin")
        staff.click("text=Queue")
        row = staff.locator(f"tr[data-conversation='{cid}']")
        expect(row).to_contain_text("When is the deadline for the appeal of a mark?")
        expect(row).to_contain_text("not verified")
        shoot(staff, "02-console-queue")
        row.locator("button.claim").click()
        expect(staff.locator(".desk-state")).to_contain_text("handled by erin")
        expect(status).to_have_text("Erin from support is replying here.")
        shoot(page, "03-widget-claimed-desktop")

        staff.fill("#reply-text", "Hello, I am Erin from support. What do you need?")
        staff.click("button.send-reply")
        person = page.locator(".chops-person")
        expect(person.locator(".chops-text")).to_have_text("Hello, I am Erin from support. What do you need?")
        expect(person.locator(".chops-name")).to_have_text("Erin · support")
        calls = len(llm.calls)
        page.fill(".chops-input", "My upload limit seems wrong.")
        page.keyboard.press("Enter")
        expect(staff.locator(".desk-log")).to_contain_text("My upload limit seems wrong.")  # the console refreshes
        assert len(llm.calls) == calls and page.locator(".chops-bot").count() == 3  # no model, no agent bubble
        shoot(page, "04-widget-staff-reply-desktop")
        shoot(staff, "05-console-conversation")

        staff.click("button.release")
        expect(status).to_be_hidden()
        script_profile_answer(llm)
        page.fill(".chops-input", "What is my upload limit?")
        page.keyboard.press("Enter")
        expect(page.locator(".chops-bot").last.locator(".chops-text")).to_have_text(
            "demo_leader asked: What is my upload limit?")
        assert [(h.user_text, h.reply, h.staff) for h in agent.seen[-1]][-2:] == [  # the exchange with staff
            ("", "Hello, I am Erin from support. What do you need?", "Erin"), ("My upload limit seems wrong.", None, None)]
        shoot(page, "06-widget-agent-again-desktop")

        phone = browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
        phone.goto(f"{srv.url}/widget?token={host_site_jwt('demo_vice')}")
        phone.locator(".chops-launcher").click()
        script_handoff(llm)
        phone.fill(".chops-input", "I'd like a human")
        phone.locator(".chops-send").click()
        expect(phone.locator(".chops-status")).to_contain_text("a person will reply here")
        expect(phone.locator(".chops-status")).not_to_contain_text("No one")  # Erin was active just now
        shoot(phone, "07-widget-waiting-phone")
        vice = phone.locator(".chops-widget").get_attribute("data-conversation-id")
        client = app.test_client()
        client.post(f"/v1/staff/conversations/{vice}/claim", headers=staff_headers("sam"))
        client.post(f"/v1/staff/conversations/{vice}/messages", json={"text": "Hi, Sam here. How can I help?"},
                    headers=staff_headers("sam"))
        expect(phone.locator(".chops-person .chops-text")).to_have_text("Hi, Sam here. How can I help?")
        shoot(phone, "08-widget-staff-reply-phone")
        client.post(f"/v1/staff/conversations/{vice}/close", headers=staff_headers("sam"))
        expect(phone.locator(".chops-status")).to_contain_text("This conversation was closed")
        shoot(phone, "09-widget-closed-phone")
