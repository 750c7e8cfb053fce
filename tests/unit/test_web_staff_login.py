"""Named staff accounts in the console: sign-in with name + password, disabling, the shared key for scripts."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from chops import tables as t
from chops.staff_accounts import StaffAccounts, StaffError
from tests.unit.web_support import STAFF_KEY, STAFF_PASSWORD, add_staff, make_app, script_queued_write, start


@pytest.fixture
def web(sqlite_url):
    app, llm, engine = make_app(sqlite_url)
    add_staff(app, "sam", "Sam Staff")
    return app.test_client(), llm, engine


def sign_in(client, name="sam", password=STAFF_PASSWORD):
    return client.post("/console/login?next=/console/audit", data={"name": name, "password": password})


def test_the_right_password_signs_in_with_a_fresh_session(web):
    client, _, _ = web
    with client.session_transaction() as sess:  # what a visitor's session held before signing in
        sess["csrf"], sess["planted"] = "token-from-before", "x"
    resp = sign_in(client)
    assert resp.status_code == 302 and resp.headers["Location"].endswith("/console/audit")
    with client.session_transaction() as sess:
        assert dict(sess) == {"staff": "sam"}
    assert "signed in as sam" in client.get("/console/").get_data(as_text=True)


def test_a_wrong_password_an_unknown_name_and_a_disabled_account_get_the_same_answer(web):
    client, _, engine = web
    add_staff(client.application, "old", password="another long passphrase")
    StaffAccounts(engine).disable("old")
    answers = [sign_in(client, "sam", "not the password"), sign_in(client, "nobody", STAFF_PASSWORD),
               sign_in(client, "old", "another long passphrase"), sign_in(client, "Bad Name!", "x")]
    assert {r.status_code for r in answers} == {401}
    assert len({r.get_data() for r in answers}) == 1 and b"wrong name or password" in answers[0].get_data()
    with client.session_transaction() as sess:
        assert "staff" not in sess
    assert client.get("/console/").status_code == 302


def test_disabling_an_account_ends_its_session(web):
    client, _, engine = web
    sign_in(client)
    assert client.get("/console/").status_code == 200
    StaffAccounts(engine).disable("sam")
    resp = client.get("/console/")
    assert resp.status_code == 302 and "/console/login" in resp.headers["Location"]
    with client.session_transaction() as sess:
        assert "staff" not in sess


def test_the_shared_key_names_the_acting_member_and_the_audit_records_it(web):
    client, llm, engine = web
    cid, auth = start(client)
    script_queued_write(llm, 40)
    approval_id = client.post(f"/v1/conversations/{cid}/messages", json={"text": "Set my upload limit to 40"},
                              headers=auth).get_json()["approval_id"]
    named = {"X-Staff-Key": STAFF_KEY, "X-Staff-Name": "sam"}
    for bad in ({"X-Staff-Key": STAFF_KEY, "X-Staff-Name": "nobody"}, {"X-Staff-Key": "wrong", "X-Staff-Name": "sam"}):
        assert client.get("/console/", headers=bad).status_code == 302
    assert "signed in as api-key" in client.get("/console/", headers={"X-Staff-Key": STAFF_KEY}).get_data(as_text=True)
    assert client.post(f"/console/approvals/{approval_id}/approve", headers=named).status_code == 302
    with engine.connect() as conn:
        assert conn.execute(sa.select(t.approval.c.decided_by)).scalar() == "sam"
        audit = conn.execute(sa.select(t.audit_log.c.nickname, t.audit_actor.c.actor)
                             .join(t.audit_actor, t.audit_actor.c.audit_id == t.audit_log.c.id)).one()
    assert tuple(audit) == ("demo_leader", "sam")
    StaffAccounts(engine).disable("sam")
    assert client.get("/console/", headers=named).status_code == 302


def test_accounts_keep_only_a_scrypt_hash_and_refuse_bad_names_and_short_passwords(web):
    _, _, engine = web
    accounts = StaffAccounts(engine)
    with engine.connect() as conn:
        stored = conn.execute(sa.select(t.staff_account.c.password_hash)).scalar()
    assert stored.startswith("scrypt:32768:8:1$") and STAFF_PASSWORD not in stored
    assert [a.model_dump(include={"name", "display_name", "disabled"}) for a in accounts.list()] == [
        {"name": "sam", "display_name": "Sam Staff", "disabled": False}]
    for args, code in ((("sam", STAFF_PASSWORD), "name_taken"), (("Sam Staff", STAFF_PASSWORD), "invalid_name"),
                       (("kim", "short"), "weak_password")):
        with pytest.raises(StaffError) as err:
            accounts.add(*args)
        assert err.value.code == code
    with pytest.raises(StaffError) as err:
        accounts.disable("nobody")
    assert err.value.code == "not_found"
