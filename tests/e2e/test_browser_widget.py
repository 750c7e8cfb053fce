"""A real browser (Debian's headless Chromium, driven by Playwright) uses the widget: a host-site JWT
minted with stock PyJWT opens it from the floating launcher, by keyboard; the typing indicator shows
while the model works; user text is never HTML; badges tell saved from nothing-changed; streamed
deltas give way to the final reply; a dropped connection offers a retry; the panel fits a phone.
Then a staff member approves a queued write in the console and the widget shows the decision.
Screenshots go to the test's tmp dir and are copied to /work/helper-brief/screens/."""

from __future__ import annotations

import http.server
import json
import shutil
import threading
import time
from pathlib import Path

import jwt
import pytest

from tests.unit.pipeline_support import member, to_profile, verdict
from tests.unit.web_support import (SECRET, STAFF_PASSWORD, LiveServer, add_staff, echo_answer, make_app,
                                    script_passed_write, script_profile_answer, script_queued_write)

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def browser():
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def shoot(tmp_path):
    """shoot(page, name): a screenshot in the test's own temporary folder (tests write nowhere else)."""
    where = tmp_path / "screens"
    where.mkdir()

    def take(page, name: str) -> Path:
        path = where / f"{name}.png"
        page.screenshot(path=str(path))
        return path

    return take


def sign_in(page, base_url: str, name: str = "sam") -> None:
    """Sign staff member ``name`` in to the console on ``page`` through its login form."""
    page.goto(f"{base_url}/console/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", STAFF_PASSWORD)
    page.click("button[type=submit]")


def demo_chat(page, base_url: str, nickname: str = "demo_leader") -> None:
    """Open the widget's demo page on ``page`` and start a chat as ``nickname`` (demo mode's sign-in form)."""
    page.goto(f"{base_url}/widget")
    page.fill("#nickname", nickname)
    page.click("#start button")


def host_site_jwt(nickname: str) -> str:
    """What the host site does: a stock PyJWT HS256 token with sub and exp."""
    return jwt.encode({"sub": nickname, "exp": int(time.time()) + 600}, SECRET, algorithm="HS256")


def sse(*events: tuple[str, dict]) -> str:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def test_the_widget_from_a_host_site_jwt(sqlite_url, browser, shoot):
    from playwright.sync_api import expect

    app, llm, engine = make_app(sqlite_url)
    with LiveServer(app) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{srv.url}/widget?token={host_site_jwt('demo_leader')}")
        launcher = page.locator(".chops-launcher")
        expect(launcher).to_have_attribute("aria-expanded", "false")
        shoot(page, "01-launcher")
        launcher.focus()
        page.keyboard.press("Enter")  # keyboard opens the panel and puts the cursor in the message box
        expect(page.locator(".chops-panel")).to_be_visible()
        expect(page.locator(".chops-input")).to_be_focused()
        page.keyboard.press("Escape")  # ... and Escape closes it, focus back on the launcher
        expect(page.locator(".chops-panel")).to_be_hidden()
        expect(launcher).to_be_focused()
        page.keyboard.press("Enter")

        # 1. While the model works the typing indicator shows; the user's markup stays text.
        gate = threading.Event()
        to_profile(llm)
        llm.enqueue("executor", lambda messages, schema: (gate.wait(20), echo_answer(messages, schema))[1])
        llm.enqueue("verifier", verdict(9))
        question = "<img src=x onerror=\"document.title='pwned'\"><b>What</b> is my upload limit?"
        page.fill(".chops-input", question)
        page.keyboard.press("Enter")
        first = page.locator(".chops-bot").nth(0)
        expect(first.locator(".chops-typing")).to_be_visible()
        shoot(page, "02-typing")
        gate.set()
        expect(first.locator(".chops-text")).to_have_text(f"demo_leader asked: {question}")
        expect(first.locator(".chops-typing")).to_have_count(0)
        assert page.locator(".chops-log img, .chops-log b").count() == 0
        assert page.title() != "pwned"
        expect(page.locator(".chops-user .chops-text")).to_have_text(question)
        assert page.locator(".chops-time").count() == 3  # the greeting, the question, the answer
        assert page.locator(".chops-time").first.get_attribute("datetime")
        expect(first.locator(".chops-badge")).to_have_count(0)  # an answer changes nothing: no badge

        # 2. Badges tell the truth: the limit is already 20 -> nothing changed; 40 -> saved.
        assert member(engine, "demo_leader")["limit"] == 20
        script_passed_write(llm, 20)
        page.fill(".chops-input", "Set my upload limit to 20")
        page.keyboard.press("Enter")
        second = page.locator(".chops-bot").nth(1)
        expect(second.locator(".chops-badge")).to_have_text("Nothing changed.")
        script_passed_write(llm, 40)
        page.fill(".chops-input", "Set my upload limit to 40")
        page.keyboard.press("Enter")
        third = page.locator(".chops-bot").nth(2)
        expect(third.locator(".chops-committed")).to_have_text("Change saved.")
        assert member(engine, "demo_leader")["limit"] == 40
        shoot(page, "03-badges")
        labels = page.evaluate("""() => [
            {operation: "Op", outcome: "ok", committed: true, queued: false},
            {operation: "Op", outcome: "ok_noop", committed: true, queued: false},
            {operation: "Op", outcome: "ok", committed: false, queued: true},
            {operation: "Op", outcome: "refused_permission", committed: false, queued: false},
            {operation: null, outcome: null, committed: false, queued: false, error: "model_timeout"},
            {operation: "ReadOp", outcome: "ok", committed: false, queued: false},
            {operation: null, outcome: null, committed: false, queued: false},
        ].map(p => { const b = ChopsWidget.badgeFor(p); return b && b[1]; })""")
        assert labels == ["Change saved.", "Nothing changed.",
                          "Waiting for staff approval — their decision will appear here.",
                          "Not done.", "Not done.", None, None]

        # 3. Streamed deltas are plain text, and the final reply wins over the draft.
        messages_url = f"{srv.url}/v1/conversations/*/messages"
        page.route(messages_url, lambda route: route.fulfill(
            status=200, headers={"Content-Type": "text/event-stream"},
            body=sse(("progress", {"step": "classify", "iteration": 1, "route": "guide"}),
                     ("delta", {"text": "Uploads are <b>"}), ("delta", {"text": "limited</b>…"}),
                     ("answer", {"reply": "Uploads are limited to 20 MB.", "outcome": None,
                                 "operation": None, "committed": False, "queued": False}))))
        page.fill(".chops-input", "How big may uploads be?")
        page.keyboard.press("Enter")
        fourth = page.locator(".chops-bot").nth(3)
        expect(fourth.locator(".chops-text")).to_have_text("Uploads are limited to 20 MB.")
        assert page.locator(".chops-log b").count() == 0
        page.unroute(messages_url)

        # 4. A dropped connection (the request never arrived) offers a retry that then succeeds.
        page.route(messages_url, lambda route: route.abort("connectionreset"))
        page.fill(".chops-input", "What is my upload limit now?")
        page.keyboard.press("Enter")
        dropped = page.locator(".chops-error")
        expect(dropped.locator(".chops-text")).to_have_text("The connection dropped before the answer arrived.")
        shoot(page, "04-dropped")
        page.unroute(messages_url)
        script_profile_answer(llm)
        dropped.locator(".chops-retry").click()
        expect(page.locator(".chops-bot").last.locator(".chops-text")).to_have_text(
            "demo_leader asked: What is my upload limit now?")
        expect(page.locator(".chops-error")).to_have_count(0)
        assert page.locator(".chops-user").count() == 5  # the retry did not repeat the user's bubble
        shoot(page, "05-desktop")

        # 5. At a phone's width the panel takes the whole screen.
        phone = browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
        phone.goto(f"{srv.url}/widget?token={host_site_jwt('demo_vice')}")
        phone.locator(".chops-launcher").click()
        script_profile_answer(llm)
        phone.fill(".chops-input", "What is my upload limit?")
        phone.locator(".chops-send").click()
        expect(phone.locator(".chops-bot .chops-text")).to_have_text("demo_vice asked: What is my upload limit?")
        box = phone.locator(".chops-panel").bounding_box()
        assert (box["width"], box["height"]) == (PHONE["width"], PHONE["height"])
        shoot(phone, "06-phone")


def test_chat_then_approve_the_queued_write_in_the_console(sqlite_url, browser, shoot):
    from playwright.sync_api import expect

    app, llm, engine = make_app(sqlite_url, demo_mode=True)
    add_staff(app, "erin", "Erin Staff")
    script_profile_answer(llm)
    script_queued_write(llm, 40)
    with LiveServer(app) as srv:
        page = browser.new_page()
        demo_chat(page, srv.url)
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
        expect(second.locator(".chops-queued")).to_contain_text("Waiting for staff approval")
        expect(second.locator(".chops-step-verify")).to_have_count(5)
        conversation_id = page.locator(".chops-widget").get_attribute("data-conversation-id")
        assert member(engine, "demo_leader")["limit"] == 20

        staff = browser.new_page(viewport={"width": 1280, "height": 900})
        staff.goto(f"{srv.url}/console/")
        staff.fill("input[name=name]", "erin")
        staff.fill("input[name=password]", STAFF_PASSWORD)
        staff.click("button[type=submit]")
        staff.fill("input[name=user]", "leader")
        staff.select_option("select[name=route]", "system")
        staff.click("form.filters button[type=submit]")
        row = staff.locator(f"tr[data-conversation='{conversation_id}']")
        expect(row).to_contain_text("demo_leader")
        expect(staff.locator("tr[data-conversation]")).to_have_count(1)
        shoot(staff, "07-console-filtered")
        row.locator("a").click()
        expect(staff.locator("#turn-2")).to_contain_text("queued for approval")
        expect(staff.locator("#turn-2 .step-verifier").first).to_contain_text("vs threshold 8.0")
        staff.click("text=Approvals")
        approval = staff.locator("tr[data-approval]")
        expect(approval).to_contain_text("ChangeAllTypesUploadLimit")
        shoot(staff, "08-console-approvals")
        approval.locator("button.approve").click()
        expect(staff.locator(".flash.ok")).to_contain_text("approved: ok")
        assert member(engine, "demo_leader")["limit"] == 40

        # The widget polls the history and shows the staff decision to the user.
        expect(page.locator(".chops-staff")).to_contain_text("approved", timeout=15_000)
        shoot(page, "09-staff-decision")


def test_a_host_site_on_another_origin_embeds_the_script_tag(sqlite_url, browser, shoot):
    """The documented embed: a host page on another origin (a second HTTP server on 127.0.0.1)
    carries one script tag with a PyJWT-minted token; the widget talks to the service across origins."""
    from playwright.sync_api import expect

    app, llm, _ = make_app(sqlite_url)
    script_profile_answer(llm)
    with LiveServer(app) as srv:
        html = (f"<!doctype html><html><head><title>Host site</title></head><body><h1>My account</h1>"
                f"<script src=\"{srv.url}/widget.js\" data-token=\"{host_site_jwt('demo_vice')}\"></script>"
                f"</body></html>").encode()

        class HostPage(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's naming
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(html)

            def log_message(self, *args):
                pass

        host = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HostPage)
        threading.Thread(target=host.serve_forever, daemon=True).start()
        try:
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{host.server_port}/account")
            page.locator(".chops-launcher").click()
            page.fill(".chops-input", "What is my upload limit?")
            page.keyboard.press("Enter")
            expect(page.locator(".chops-bot .chops-text")).to_have_text("demo_vice asked: What is my upload limit?")
            shoot(page, "10-embedded-on-host-site")
        finally:
            host.shutdown()
            host.server_close()


def test_a_message_sent_while_the_last_is_answered_goes_out_after_it(sqlite_url, browser):
    from playwright.sync_api import expect

    app, llm, engine = make_app(sqlite_url, demo_mode=True)
    gate = threading.Event()
    to_profile(llm)
    llm.enqueue("executor", lambda messages, schema: (gate.wait(20), echo_answer(messages, schema))[1])
    llm.enqueue("verifier", verdict(9))
    script_profile_answer(llm)
    with LiveServer(app) as srv:
        page = browser.new_page()
        demo_chat(page, srv.url)
        page.fill(".chops-input", "What is my upload limit?")
        page.press(".chops-input", "Enter")
        expect(page.locator(".chops-bot .chops-typing")).to_be_visible()
        # Sent while the first is being answered: kept in the box, not dropped, not sent twice at once.
        page.fill(".chops-input", "And who leads my team?")
        page.press(".chops-input", "Enter")
        expect(page.locator(".chops-input")).to_have_value("And who leads my team?")
        expect(page.locator(".chops-user")).to_have_count(1)
        gate.set()
        expect(page.locator(".chops-bot").nth(1).locator(".chops-text")).to_have_text(
            "demo_leader asked: And who leads my team?")
        expect(page.locator(".chops-input")).to_have_value("")
        expect(page.locator(".chops-user")).to_have_count(2)
