"""The console's operation page: a form from the operation's schema, the dry run, the commit with the
staff member as the actor, and the same refusals as for the agent."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

from chops import tables as t
from apis.cphos.registry import OPERATIONS
from chops.web.console_operations import form_fields
from tests.unit.pipeline_support import member
from tests.unit.web_support import STAFF_KEY, STAFF_PASSWORD, add_staff, make_app

LIMIT_FORM = "/console/operations/ChangeAllTypesUploadLimit"


@pytest.fixture
def web(sqlite_url):
    app, _, engine = make_app(sqlite_url)
    add_staff(app, "sam", "Sam Staff")
    client = app.test_client()
    client.post("/console/login", data={"name": "sam", "password": STAFF_PASSWORD})
    return client, engine


def form(client, url: str = LIMIT_FORM) -> dict[str, str]:
    """The hidden fields of the freshly shown form (CSRF token and idempotency key)."""
    page = client.get(url).get_data(as_text=True)
    return {name: re.search(rf'name="{name}" value="([^"]*)"', page).group(1) for name in ("csrf", "key")}


def audit_with_actor(engine) -> list[dict]:
    query = sa.select(t.audit_log, t.audit_actor.c.actor).select_from(
        t.audit_log.outerjoin(t.audit_actor, t.audit_actor.c.audit_id == t.audit_log.c.id))
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def outcome(page: str) -> str:
    return re.search(r'data-outcome="([^"]+)"', page).group(1)


def test_every_operation_is_listed_and_its_form_comes_from_its_schema(web):
    client, _ = web
    listing = client.get("/console/operations?user=demo_leader").get_data(as_text=True)
    assert all(f'/console/operations/{name}?user=demo_leader"' in listing for name in OPERATIONS)
    page = client.get("/console/operations/VerifyTeacherUserToBeSupTeacher?user=demo_pending").get_data(as_text=True)
    name_input = re.search(r'<input name="arg.Name"[^>]*>', page, re.S).group(0)
    assert 'type="text"' in name_input and 'maxlength="64"' in name_input and "required" in name_input
    view_input = re.search(r'<input name="arg.ViewProblem"[^>]*>', page, re.S).group(0)
    assert 'type="number"' in view_input and "required" in view_input
    assert "real name, as it should be registered" in page
    assert 'name="user" value="demo_pending"' in page and re.search(r'name="key" value="console-[0-9a-f]{32}"', page)
    assert "takes no arguments" in client.get("/console/operations/MakeAllTypesToBeArbiter").get_data(as_text=True)
    for op in OPERATIONS.values():  # one input per argument, with its description, for every operation
        assert [(f["name"], f["description"]) for f in form_fields(op)] == [
            (f.alias, f.description) for f in op.args_model.model_fields.values()]
    assert client.get("/console/operations/DropAllTables").status_code == 404


def test_the_dry_run_shows_the_diff_and_writes_nothing(web):
    client, engine = web
    hidden = form(client)
    resp = client.post(LIMIT_FORM, data={**hidden, "user": "demo_leader", "arg.Limit": "40", "action": "preview"})
    page = resp.get_data(as_text=True)
    assert resp.status_code == 200 and outcome(page) == "ok"
    assert "<td>cmf_tp_member</td>" in page and "<td>20</td><td>40</td>" in page
    assert 'value="commit"' in page and f'name="key" value="{hidden["key"]}"' in page
    assert member(engine, "demo_leader")["limit"] == 20 and audit_with_actor(engine) == []


@pytest.mark.parametrize("user, fields, code", [
    ("demo_leader", {"arg.Limit": "forty"}, "refused_invalid_arg"),
    ("demo_leader", {"arg.Limit": "500"}, "refused_invalid_arg"),
    ("demo_leader", {}, "refused_missing_args"),
    ("nobody_here", {"arg.Limit": "40"}, "not_in_system"),
])
def test_bad_input_gets_the_agents_stable_outcome_code_and_writes_nothing(web, user, fields, code):
    client, engine = web
    for action in ("preview", "commit"):
        resp = client.post(LIMIT_FORM, data={**form(client), "user": user, "action": action, **fields})
        assert resp.status_code == 422 and outcome(resp.get_data(as_text=True)) == code
        assert 'value="commit"' not in resp.get_data(as_text=True)
    assert member(engine, "demo_leader")["limit"] == 20 and audit_with_actor(engine) == []


def test_the_operation_runs_with_the_users_rights(web):
    client, engine = web
    url = "/console/operations/AddNewSchoolByName"
    fields = {"arg.SchoolName": "Made-up Test School", "arg.AreaName": "Lakeside"}
    resp = client.post(url, data={**form(client, url), "user": "demo_leader", "action": "commit", **fields})
    assert outcome(resp.get_data(as_text=True)) == "refused_permission" and audit_with_actor(engine) == []


def test_a_malformed_key_or_a_missing_csrf_token_is_refused(web):
    client, engine = web
    hidden = form(client)
    data = {"user": "demo_leader", "arg.Limit": "40", "action": "commit"}
    assert client.post(LIMIT_FORM, data={**data, "csrf": hidden["csrf"], "key": "mine"}).status_code == 400
    assert client.post(LIMIT_FORM, data={**data, "key": hidden["key"]}).status_code == 400
    read = "/console/operations/GetTeacherInfoByName"
    assert client.post(read, data={**form(client, read), "user": "demo_admin", "action": "commit"}).status_code == 400
    assert member(engine, "demo_leader")["limit"] == 20 and audit_with_actor(engine) == []


def test_commit_writes_once_with_the_staff_member_as_the_actor(web):
    client, engine = web
    hidden = form(client)
    data = {**hidden, "user": "demo_leader", "arg.Limit": "40", "action": "commit"}
    first = client.post(LIMIT_FORM, data=data).get_data(as_text=True)
    assert "Committed" in first and outcome(first) == "ok" and "already committed" not in first
    again = client.post(LIMIT_FORM, data=data).get_data(as_text=True)  # the double submit
    assert "already committed: nothing was written again" in again
    assert member(engine, "demo_leader")["limit"] == 40
    [row] = audit_with_actor(engine)
    assert (row["nickname"], row["actor"], row["idempotency_key"], row["request_id"]) == (
        "demo_leader", "sam", hidden["key"], "console")
    audit = client.get("/console/audit").get_data(as_text=True)
    assert re.search(r"<td>demo_leader</td>\s*<td class=\"actor\">staff <strong>sam</strong></td>", audit)
    other = client.post(LIMIT_FORM, data={**data, "arg.Limit": "41"}).get_data(as_text=True)  # same key, new args
    assert outcome(other) == "refused_invalid_arg" and member(engine, "demo_leader")["limit"] == 40


def test_an_operation_that_always_needs_approval_is_approved_by_the_staff_commit(web):
    client, engine = web
    store = client.application.extensions["chops"].store
    store.set_policy("ChangeAllTypesUploadLimit", True)
    page = client.get(LIMIT_FORM).get_data(as_text=True)
    assert "your commit is that approval" in page
    client.post(LIMIT_FORM, data={**form(client), "user": "demo_leader", "arg.Limit": "35", "action": "commit"})
    assert member(engine, "demo_leader")["limit"] == 35 and store.list_approvals(None) == []


def test_a_read_runs_as_the_user_and_shows_its_data(web):
    client, engine = web
    url = "/console/operations/GetTeacherInfoByName"
    page = client.post(url, data={**form(client, url), "user": "demo_admin", "arg.TeacherName": "Lena Leader",
                                  "action": "preview"}).get_data(as_text=True)
    assert outcome(page) == "ok" and "<pre>" in page and 'value="commit"' not in page
    assert audit_with_actor(engine) == []


def test_a_script_commits_with_the_shared_key_and_a_name(web, sqlite_url):
    client, engine = web
    script = client.application.test_client()  # no session: header auth, no CSRF token
    key = form(client)["key"]
    headers = {"X-Staff-Key": STAFF_KEY, "X-Staff-Name": "sam"}
    resp = script.post(LIMIT_FORM, data={"key": key, "user": "demo_leader", "arg.Limit": "33", "action": "commit"},
                       headers=headers)
    assert resp.status_code == 200 and member(engine, "demo_leader")["limit"] == 33
    assert [r["actor"] for r in audit_with_actor(engine)] == ["sam"]
