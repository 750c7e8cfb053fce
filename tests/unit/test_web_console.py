"""The staff console: login, the trace of every turn, approving and rejecting queued writes, policies."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

from chops import tables as t
from chops.pipeline import idempotency_key
from tests.unit.pipeline_support import GUIDE_CHUNKS, member, to_guide
from tests.unit.web_support import STAFF_KEY, STAFF_PASSWORD, add_staff, make_app, script_queued_write, start, verdict

STAFF = {"X-Staff-Key": STAFF_KEY}


@pytest.fixture
def web(sqlite_url):
    app, llm, engine = make_app(sqlite_url)
    return app.test_client(), llm, engine


def login(client, name="sam") -> str:
    """Create the staff account ``name`` (unless it exists) and sign in through the form; returns the
    page's CSRF token."""
    from chops.staff_accounts import StaffAccounts

    if StaffAccounts(client.application.extensions["chops"].engine).get(name) is None:
        add_staff(client.application, name)
    resp = client.post("/console/login", data={"name": name, "password": STAFF_PASSWORD})
    assert resp.status_code == 302
    return csrf(client.get("/console/approvals").get_data(as_text=True))


def csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def queue_write(client, llm, limit=40, text="Set my upload limit to {limit}") -> tuple[str, dict, int]:
    cid, auth = start(client, "demo_leader")
    script_queued_write(llm, limit)
    body = client.post(f"/v1/conversations/{cid}/messages", json={"text": text.format(limit=limit)},
                       headers=auth).get_json()
    assert body["queued"]
    return cid, auth, body["approval_id"]


def test_the_console_needs_a_staff_account_or_the_key(web):
    client, _, _ = web
    resp = client.get("/console/")
    assert resp.status_code == 302 and "/console/login" in resp.headers["Location"]
    assert client.post("/console/login", data={"name": "sam", "password": "wrong"}).status_code == 401
    assert client.post("/console/login", data={"key": STAFF_KEY}).status_code == 401  # the key is for scripts
    assert client.get("/console/").status_code == 302
    assert client.get("/console/", headers={"X-Staff-Key": "wrong"}).status_code == 302
    assert client.get("/console/", headers=STAFF).status_code == 200
    login(client)
    page = client.get("/console/").get_data(as_text=True)
    assert "signed in as sam" in page


def test_login_redirects_only_inside_the_console(web):
    client, _, _ = web
    add_staff(client.application)
    resp = client.post("/console/login?next=https://evil.example/", data={"name": "sam", "password": STAFF_PASSWORD})
    assert resp.headers["Location"].endswith("/console/")


def test_without_a_staff_key_the_console_is_closed_unless_demo(sqlite_url, tmp_path):
    app, _, _ = make_app(sqlite_url, staff_api_key=None)
    client = app.test_client()
    assert client.get("/console/").status_code == 302
    assert client.post("/console/login", data={"name": "", "password": ""}).status_code == 401
    demo, _, _ = make_app(f"sqlite:///{tmp_path / 'demo.db'}", staff_api_key=None, demo_mode=True)
    assert demo.test_client().get("/console/").status_code == 200


def test_a_form_post_without_the_csrf_token_is_refused(web):
    client, llm, engine = web
    _, _, approval_id = queue_write(client, llm)
    login(client)
    resp = client.post(f"/console/approvals/{approval_id}/approve", data={})
    assert resp.status_code == 400
    assert member(engine, "demo_leader")["limit"] == 20


def test_the_list_shows_conversations_and_refreshes_itself(web):
    client, llm, _ = web
    cid, _ = start(client, "demo_vice")
    page = client.get("/console/", headers=STAFF).get_data(as_text=True)
    assert 'data-live="/console/fragments/conversations"' in page
    fragment = client.get("/console/fragments/conversations", headers=STAFF).get_data(as_text=True)
    assert cid in fragment and "demo_vice" in fragment


def test_a_guide_turns_trace_shows_chunks_scores_cost_and_latency(web):
    client, llm, _ = web
    cid, auth = start(client)
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": "Open Papers and press Upload."})
    llm.enqueue("verifier", verdict(9, "grounded in the guide"))
    client.post(f"/v1/conversations/{cid}/messages", json={"text": "How do I upload sheets?"}, headers=auth)
    page = client.get(f"/console/conversations/{cid}", headers=STAFF).get_data(as_text=True)
    chunk = GUIDE_CHUNKS[0]
    assert f"{chunk.file} p.{chunk.page}" in page
    assert "score <strong>9</strong> vs threshold 8.0" in page and "grounded in the guide" in page
    assert "How do I upload sheets?" in page and "Open Papers and press Upload." in page
    assert re.search(r"model call\(s\) · \d+ chars in / \d+ out\s+· \$0\.000000 · [\d.]+ s", page)


def test_a_queued_writes_trace_shows_the_dry_run_diff(web):
    client, llm, _ = web
    cid, _, approval_id = queue_write(client, llm, 40)
    page = client.get(f"/console/fragments/conversations/{cid}", headers=STAFF).get_data(as_text=True)
    assert 'ChangeAllTypesUploadLimit({"Limit": 40})' in page and "dry run" in page
    assert "<td>cmf_tp_member</td>" in page and "<td>20</td><td>40</td>" in page
    assert f"approval #{approval_id} (chooser)" in page and "queued for approval" in page


def test_approve_commits_once_with_the_stored_key_and_tells_the_user(web):
    client, llm, engine = web
    cid, auth, approval_id = queue_write(client, llm, 40)
    token = login(client)
    queue_page = client.get("/console/approvals").get_data(as_text=True)
    assert f'id="approval-{approval_id}"' in queue_page and "cmf_tp_member.limit: 20 → 40" in queue_page
    resp = client.post(f"/console/approvals/{approval_id}/approve", data={"csrf": token}, follow_redirects=True)
    assert f"approval #{approval_id} approved: ok" in resp.get_data(as_text=True)
    assert member(engine, "demo_leader")["limit"] == 40
    with engine.connect() as conn:
        audits = conn.execute(sa.select(t.audit_log)).mappings().all()
        approval = conn.execute(sa.select(t.approval)).mappings().one()
    assert [a["idempotency_key"] for a in audits] == [approval["idempotency_key"]] == [idempotency_key(f"{cid}:1")]
    assert (approval["status"], approval["decided_by"]) == ("approved", "sam")
    again = client.post(f"/console/approvals/{approval_id}/approve", data={"csrf": token}, follow_redirects=True)
    assert "already approved" in again.get_data(as_text=True)
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(t.audit_log)).scalar() == 1
    history = client.get(f"/v1/conversations/{cid}", headers=auth).get_json()["turns"]
    assert history[-1]["user_text"] == "" and "approved" in history[-1]["reply"]
    assert "sam" not in history[-1]["reply"]  # staff names stay internal
    audit_page = client.get("/console/audit").get_data(as_text=True)
    assert "ChangeAllTypesUploadLimit" in audit_page and f"approval:{approval_id}" in audit_page


def test_reject_writes_nothing_and_appends_the_note_to_the_conversation(web):
    client, llm, engine = web
    cid, auth, approval_id = queue_write(client, llm, 40)
    token = login(client)
    client.post(f"/console/approvals/{approval_id}/reject", data={"csrf": token, "note": "Limits above 30 need a form."})
    assert member(engine, "demo_leader")["limit"] == 20
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(t.audit_log)).scalar() == 0
        assert conn.execute(sa.select(t.approval.c.status)).scalar() == "rejected"
    last = client.get(f"/v1/conversations/{cid}", headers=auth).get_json()["turns"][-1]
    assert "declined" in last["reply"] and "Limits above 30 need a form." in last["reply"]
    rejected = client.get("/console/approvals?status=rejected").get_data(as_text=True)
    assert "Limits above 30 need a form." in rejected
    assert client.get("/console/approvals?status=bogus").status_code == 400


def test_policies_switch_operations_to_always_need_approval(web):
    client, _, _ = web
    store = client.application.extensions["chops"].store
    token = login(client)
    page = client.get("/console/policies").get_data(as_text=True)
    assert 'value="ChangeAllTypesUploadLimit"' in page and 'value="GetTeacherInfoByName"' not in page
    client.post("/console/policies", data={"csrf": token, "always": ["ChangeAllTypesUploadLimit", "AddNewSchoolByName"]})
    assert store.needs_approval("ChangeAllTypesUploadLimit") and store.needs_approval("AddNewSchoolByName")
    assert not store.needs_approval("ChangeAllTypesSchool")
    client.post("/console/policies", data={"csrf": token, "always": ["AddNewSchoolByName"]})
    assert not store.needs_approval("ChangeAllTypesUploadLimit")
    assert 'value="AddNewSchoolByName" id="policy-AddNewSchoolByName" checked' in \
        client.get("/console/policies").get_data(as_text=True)


def test_a_policy_sends_a_passed_write_to_the_queue(web):
    client, llm, engine = web
    client.application.extensions["chops"].store.set_policy("ChangeAllTypesUploadLimit", True)
    from tests.unit.web_support import script_passed_write

    cid, auth = start(client)
    script_passed_write(llm, 35)
    body = client.post(f"/v1/conversations/{cid}/messages", json={"text": "Set my upload limit to 35"},
                       headers=auth).get_json()
    assert body["queued"] and not body["committed"] and member(engine, "demo_leader")["limit"] == 20


def test_unknown_conversation_in_the_console_is_404(web):
    client, _, _ = web
    assert client.get("/console/conversations/nope", headers=STAFF).status_code == 404


def test_a_chinese_user_is_told_the_staff_decision_in_chinese(web):
    client, llm, engine = web
    cid, auth, approval_id = queue_write(client, llm, 40, text="请把我的上传上限改成{limit}")
    token = login(client)
    client.post(f"/console/approvals/{approval_id}/approve", data={"csrf": token, "note": "已核实"})
    turns = client.get(f"/v1/conversations/{cid}", headers=auth).get_json()["turns"]
    assert turns[0]["reply"].startswith("您的请求（更改上传上限：40）已提交给工作人员审核")
    assert turns[-1]["reply"] == "工作人员已批准您的请求（更改上传上限：40）。已完成：更改上传上限：40。工作人员留言：已核实"


def test_an_approved_write_that_cannot_be_carried_out_is_failed_and_the_user_is_told(web, monkeypatch):
    from chops.domain.outcomes import OperationResult, Outcome, PlanResult

    client, llm, engine = web
    cid, auth, approval_id = queue_write(client, llm, 40)
    token = login(client)

    class Refusing:  # the member's state changed after the request was queued: the write is refused
        def call_plan(self, nickname, steps, **kwargs):
            step = OperationResult(operation=steps[0][0], outcome=Outcome.REFUSED_PRECONDITION,
                                   message="the limit was changed meanwhile")
            return PlanResult(**step.model_dump(), steps=[step])

    monkeypatch.setattr(client.application.extensions["chops"].store, "api", Refusing())
    page = client.post(f"/console/approvals/{approval_id}/approve", data={"csrf": token}, follow_redirects=True)
    assert f"approval #{approval_id} failed" in page.get_data(as_text=True)
    with engine.connect() as conn:
        assert conn.execute(sa.select(t.approval.c.status)).scalar() == "failed"
    assert member(engine, "demo_leader")["limit"] == 20
    last = client.get(f"/v1/conversations/{cid}", headers=auth).get_json()["turns"][-1]
    assert "could not be carried out" in last["reply"] and "the limit was changed meanwhile" in last["reply"]
    assert not last["committed"]
    assert f'id="approval-{approval_id}"' in client.get("/console/approvals?status=failed").get_data(as_text=True)


def test_a_queued_plan_shows_every_step_and_approving_commits_them_together(web):
    client, _, engine = web
    store = client.application.extensions["chops"].store
    cid = store.create("demo_leader", "widget")
    dry = store.api.call_plan("demo_leader", [("ChangeAllTypesUploadLimit", {"Limit": 40}),
                                              ("ChangeAllTypesMarkingSubject", {"SubjectIndex": 3})], dry_run=True)
    approval_id = store.queue_approval(nickname="demo_leader", operation="ChangeAllTypesUploadLimit",
                                       args={"Limit": 40}, further_steps=[("ChangeAllTypesMarkingSubject",
                                                                           {"SubjectIndex": 3})],
                                       idempotency_key="plan-k", dry_run=dry, conversation_id=cid)
    token = login(client)
    page = client.get("/console/approvals").get_data(as_text=True)
    row = page[page.index(f'id="approval-{approval_id}"'):]
    assert "1. <code>ChangeAllTypesUploadLimit" in row and "2. <code>ChangeAllTypesMarkingSubject" in row
    assert "cmf_tp_member.limit: 20 → 40" in row and "cmf_tp_member.subject: 2 → 3" in row
    client.post(f"/console/approvals/{approval_id}/approve", data={"csrf": token}, follow_redirects=True)
    assert (member(engine, "demo_leader")["limit"], member(engine, "demo_leader")["subject"]) == (40, 3)
    told = store.history(cid)[-1]
    assert told.reply.count("Done:") == 2 and "change your upload limit: 40 and change your marking subject: 3" \
        in told.reply
