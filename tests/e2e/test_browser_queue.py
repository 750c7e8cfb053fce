"""The widget in a real browser while the model's queue is full: a ``busy`` refusal is shown and resent by
itself after Retry-After (the same Idempotency-Key, answered once), and a waiting turn shows its place."""

from __future__ import annotations

import threading

import pytest

from tests.e2e.test_browser_widget import browser, host_site_jwt  # noqa: F401 - the fixture
from tests.unit.web_support import LiveServer, make_app, script_profile_answer

pytestmark = pytest.mark.browser


def test_a_busy_refusal_is_retried_by_itself_and_a_waiting_turn_shows_its_place(sqlite_url, browser):  # noqa: F811
    from playwright.sync_api import expect

    # One place; a turn takes ~4 s: one waiting turn (4 s) is fine, a second (8 s > 6 s) is refused.
    app, llm, _ = make_app(sqlite_url, admission_capacity=1, admission_turn_s=4.0, admission_max_wait_s=6.0)
    admission = app.extensions["chops"].admission
    running, waiting = admission.enter("other-1"), admission.enter("other-2")
    script_profile_answer(llm)
    keys: list[str] = []
    with LiveServer(app) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.on("request", lambda req: keys.append(req.headers.get("idempotency-key"))
                if req.method == "POST" and req.url.endswith("/messages") else None)
        page.goto(f"{srv.url}/widget?token={host_site_jwt('demo_leader')}")
        page.click(".chops-launcher")
        page.fill(".chops-input", "What is my upload limit?")
        page.keyboard.press("Enter")
        bubble = page.locator(".chops-bot").nth(0)
        expect(bubble.locator(".chops-queue")).to_contain_text("retrying by itself")
        admission.leave(running)  # room in the queue before the resend: it waits behind other-2
        expect(bubble.locator(".chops-queue")).to_have_text("You are next, about 4 s.", timeout=15000)
        threading.Timer(0.5, admission.leave, args=(waiting,)).start()
        expect(bubble.locator(".chops-text")).to_have_text("demo_leader asked: What is my upload limit?",
                                                           timeout=15000)
        expect(bubble.locator(".chops-queue")).to_have_count(0)
    assert len(keys) == 2 and keys[0] == keys[1] and keys[0]  # one message, resent with its key
