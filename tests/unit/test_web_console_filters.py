"""Staff console: conversations filtered by user, route, outcome and date; tier and demonstrations of
a step shown when the trace has them; the approval queue shows the dry-run diff and who decided."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from chops.pipeline import TurnResult
from tests.unit.pipeline_support import to_guide
from tests.unit.web_support import (STAFF_KEY, STAFF_PASSWORD, add_staff, make_app, script_queued_write, start,
                                    verdict)

STAFF = {"X-Staff-Key": STAFF_KEY}


@pytest.fixture
def two_conversations(sqlite_url):
    """demo_vice asked the guide; demo_leader's write went to the approval queue."""
    app, llm, engine = make_app(sqlite_url)
    client = app.test_client()
    guide_cid, auth = start(client, "demo_vice")
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": "Open Papers and press Upload."})
    llm.enqueue("verifier", verdict(9))
    assert client.post(f"/v1/conversations/{guide_cid}/messages", json={"text": "How do I upload?"},
                       headers=auth).status_code == 200
    write_cid, auth = start(client, "demo_leader")
    script_queued_write(llm, 40)
    assert client.post(f"/v1/conversations/{write_cid}/messages", json={"text": "Set my limit to 40"},
                       headers=auth).get_json()["queued"]
    return app, client, guide_cid, write_cid


def listed(client, **query) -> set[str]:
    resp = client.get("/console/fragments/conversations", query_string=query, headers=STAFF)
    assert resp.status_code == 200
    return set(re.findall(r'data-conversation="([^"]+)"', resp.get_data(as_text=True)))


def test_filters_by_user_route_outcome_and_date(two_conversations):
    _, client, guide, write = two_conversations
    today, day = date.today(), timedelta(days=1)
    assert listed(client) == {guide, write}
    assert listed(client, user="vice") == {guide}
    assert listed(client, user="%") == set()  # LIKE wildcards are matched literally
    assert listed(client, route="system") == {write}
    assert listed(client, route="guide") == {guide}
    assert listed(client, outcome="ok") == {write}
    assert listed(client, outcome="refused_permission") == set()
    assert listed(client, since=str(today - day), until=str(today + day)) == {guide, write}
    assert listed(client, since=str(today + day)) == set()
    assert listed(client, until=str(today - day)) == set()
    assert listed(client, user="leader", route="guide") == set()


def test_the_page_keeps_the_filters_in_its_form_and_live_refresh(two_conversations):
    _, client, guide, write = two_conversations
    page = client.get("/console/?user=vice&route=guide", headers=STAFF).get_data(as_text=True)
    assert 'data-live="/console/fragments/conversations?user=vice&amp;route=guide"' in page
    assert 'name="user" value="vice"' in page and "<option selected>guide</option>" in page
    assert guide in page and write not in page
    assert "<option>ok_noop</option>" in page  # every outcome is offered


def test_a_malformed_date_is_a_clear_400(two_conversations):
    _, client, _, _ = two_conversations
    resp = client.get("/console/fragments/conversations?since=yesterday", headers=STAFF)
    assert resp.status_code == 400 and "since must be a date" in resp.get_data(as_text=True)


def test_tier_and_demonstrations_show_only_when_the_trace_has_them(two_conversations):
    app, client, guide, _ = two_conversations
    page = client.get(f"/console/conversations/{guide}", headers=STAFF).get_data(as_text=True)
    assert 'class="tier"' not in page and 'class="demonstrations"' not in page
    steps = [{"iteration": 1, "role": "executor", "model": "m", "tier": "large",
              "demonstrations": ["guide-upload-3", "<b>demo</b>"]}]
    app.extensions["chops"].store.append_turn(guide, "again", TurnResult(reply="ok", trace={"steps": steps}))
    page = client.get(f"/console/conversations/{guide}", headers=STAFF).get_data(as_text=True)
    assert 'tier <span class="badge">large</span>' in page
    assert "<code>guide-upload-3</code>" in page and "&lt;b&gt;demo&lt;/b&gt;" in page


def test_the_queue_shows_the_dry_run_diff_and_who_approved(two_conversations):
    _, client, _, _ = two_conversations
    add_staff(client.application, "sam", "Sam Staff")
    client.post("/console/login", data={"name": "sam", "password": STAFF_PASSWORD})
    pending = client.get("/console/approvals").get_data(as_text=True)
    assert "cmf_tp_member.limit: 20 → 40" in pending
    approval_id = re.search(r'data-approval="(\d+)"', pending).group(1)
    token = re.search(r'name="csrf" value="([^"]+)"', pending).group(1)
    client.post(f"/console/approvals/{approval_id}/approve", data={"csrf": token})
    decided = client.get("/console/approvals?status=approved").get_data(as_text=True)
    assert 'by <span class="decided-by">sam</span>' in decided
    assert "cmf_tp_member.limit: 20 → 40" in decided
