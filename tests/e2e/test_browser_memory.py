"""In headless Chromium: staff open the solution memory in the console, see the solution a verified
write left there, and delete it; it then shows only under "deleted", with who deleted it. The page
also fits a phone. Screenshots as in ``test_browser_outcomes`` ($CHOPS_SCREENSHOTS_DIR when set)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_browser_outcomes import shots  # noqa: F401 - the fixture
from tests.e2e.test_browser_widget import PHONE, browser, sign_in  # noqa: F401 - the fixture
from tests.unit.web_support import LiveServer, add_staff, make_app, script_passed_write, start

pytestmark = pytest.mark.browser


def test_staff_delete_a_remembered_solution_in_the_console(sqlite_url, browser, shots):  # noqa: F811
    from playwright.sync_api import expect

    app, llm, engine = make_app(sqlite_url, memory_enabled=True)
    client = app.test_client()
    cid, auth = start(client)
    script_passed_write(llm, 40)
    assert client.post(f"/v1/conversations/{cid}/messages", json={"text": "Could you set my upload limit to 40?"},
                       headers=auth).get_json()["committed"]
    add_staff(app, "sam", "Sam Staff")
    with LiveServer(app) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        sign_in(page, srv.url)
        page.get_by_role("link", name="Memory").click()
        row = page.locator("tr[id^=solution-]")
        expect(row).to_have_count(1)
        expect(row).to_contain_text("Could you set my upload limit to 40?")
        expect(row).to_contain_text('ChangeAllTypesUploadLimit({"Limit": 40})')
        shots(page, "memory-01-live")
        phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
        phone.add_cookies(page.context.cookies())  # the same signed-in staff member
        small = phone.new_page()
        small.goto(f"{srv.url}/console/memory")
        expect(small.locator("tr[id^=solution-]")).to_have_count(1)
        assert small.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # no sideways scroll
        shots(small, "memory-02-phone")
        phone.close()
        row.get_by_role("button", name="Delete").click()
        expect(page.locator("tr[id^=solution-]")).to_have_count(0)
        expect(page.locator("tbody")).to_contain_text("nothing here")
        page.get_by_role("link", name="deleted").click()
        gone = page.locator("tr[id^=solution-]")
        expect(gone).to_contain_text("deleted by sam at")
        expect(gone.locator("td").last).to_have_text(re.compile(r"deleted by sam\s+at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$"))
        shots(page, "memory-03-deleted")
    engine.dispose()


def test_every_console_page_fits_a_phone(sqlite_url, browser, shots):  # noqa: F811
    from playwright.sync_api import expect

    app, llm, engine = make_app(sqlite_url)
    add_staff(app, "sam", "Sam Staff")
    with LiveServer(app) as srv:
        phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
        page = phone.new_page()
        sign_in(page, srv.url)
        links = page.locator("header a")
        names = links.all_inner_texts()
        assert len(names) >= 9
        for name in names:
            page.locator("header a", has_text=name).first.click()
            expect(page.locator("h1").first).to_be_visible()
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{name}: the page is {width}px wide"
            shots(page, f"console-phone-{name.lower().replace(' ', '-')}")
        phone.close()
    engine.dispose()
