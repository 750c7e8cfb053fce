"""A real browser (Debian's headless Chromium, driven by Playwright) chats in the widget, watches the
streamed answer, then a staff member signs in to the console, finds the conversation and approves
the queued write, and the database changes."""

from __future__ import annotations

import shutil

import pytest

from tests.unit.pipeline_support import member
from tests.unit.web_support import STAFF_KEY, LiveServer, make_app, script_profile_answer, script_queued_write

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture
def browser():
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium chromium-driver", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def test_chat_in_the_widget_then_approve_the_queued_write_in_the_console(sqlite_url, browser):
    from playwright.sync_api import expect

    app, llm, engine = make_app(sqlite_url, demo_mode=True)
    script_profile_answer(llm)
    script_queued_write(llm, 40)
    with LiveServer(app) as srv:
        page = browser.new_page()
        page.goto(f"{srv.url}/widget")
        page.fill("#nickname", "demo_leader")
        page.click("#start button")
        page.fill(".chops-input", "What is my upload limit?")
        page.click(".chops-send")
        first = page.locator(".chops-bot").nth(0)
        expect(first.locator(".chops-text")).to_have_text("demo_leader asked: What is my upload limit?")
        # The progress list was filled from the stream before the answer replaced it.
        expect(first.locator(".chops-step-classify")).to_have_count(1)
        expect(first.locator(".chops-step-verify")).to_have_count(1)

        page.fill(".chops-input", "Please set my upload limit to 40")
        page.press(".chops-input", "Enter")
        second = page.locator(".chops-bot").nth(1)
        expect(second.locator(".chops-queued")).to_contain_text("Sent to support staff for approval")
        expect(second.locator(".chops-step-verify")).to_have_count(5)
        conversation_id = page.locator(".chops-widget").get_attribute("data-conversation-id")
        assert member(engine, "demo_leader")["limit"] == 20

        staff = browser.new_page()
        staff.goto(f"{srv.url}/console/")
        staff.fill("input[name=name]", "Erin Staff")
        staff.fill("input[name=key]", STAFF_KEY)
        staff.click("button[type=submit]")
        row = staff.locator(f"tr[data-conversation='{conversation_id}']")
        expect(row).to_contain_text("demo_leader")
        row.locator("a").click()
        expect(staff.locator("#turn-2")).to_contain_text("queued for approval")
        expect(staff.locator("#turn-2 .step-verifier").first).to_contain_text("vs threshold 8.0")
        staff.click("text=Approvals")
        approval = staff.locator("tr[data-approval]")
        expect(approval).to_contain_text("ChangeAllTypesUploadLimit")
        approval.locator("button.approve").click()
        expect(staff.locator(".flash.ok")).to_contain_text("approved: ok")
        assert member(engine, "demo_leader")["limit"] == 40

        # The widget polls the history and shows the staff decision to the user.
        expect(page.locator(".chops-staff")).to_contain_text("approved", timeout=15_000)
