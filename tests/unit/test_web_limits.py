"""Rate limits, open conversations, staff sign-in throttling, and the security headers and cookies."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

from chops import tables as t
from tests.unit.web_support import (STAFF_PASSWORD, add_staff, make_app, script_profile_answer, start)

ASK = {"text": "What is my upload limit?"}


def test_a_user_over_the_message_limit_is_refused_before_any_model_call(sqlite_url):
    app, llm, _ = make_app(sqlite_url, rate_limit_user="2 per minute")
    script_profile_answer(llm, times=2)
    client = app.test_client()
    cid, auth = start(client)
    other, other_auth = start(client)  # a second conversation does not reset the user's budget
    assert client.post(f"/v1/conversations/{cid}/messages", json=ASK, headers=auth).status_code == 200
    assert client.post(f"/v1/conversations/{other}/messages", json=ASK, headers=other_auth).status_code == 200
    refused = client.post(f"/v1/conversations/{cid}/messages", json=ASK, headers=auth)
    assert refused.status_code == 429
    assert refused.get_json()["error"]["code"] == "rate_limited"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    with app.extensions["chops"].engine.connect() as conn:  # nothing stored of the refused message
        assert conn.execute(sa.select(sa.func.count()).select_from(t.turn)).scalar_one() == 2
    # another user is not limited by this one
    script_profile_answer(llm)
    vice, vice_auth = start(client, "demo_vice")
    assert client.post(f"/v1/conversations/{vice}/messages", json=ASK, headers=vice_auth).status_code == 200


def test_the_conversation_and_service_limits_apply_too(sqlite_url):
    app, llm, _ = make_app(sqlite_url, rate_limit_conversation="1 per minute", rate_limit_global="2 per minute")
    script_profile_answer(llm, times=2)
    client = app.test_client()
    cid, auth = start(client)
    assert client.post(f"/v1/conversations/{cid}/messages", json=ASK, headers=auth).status_code == 200
    again = client.post(f"/v1/conversations/{cid}/messages", json={"text": "再问一次？"}, headers=auth)
    assert again.status_code == 429 and "秒" in again.get_json()["error"]["message"]  # in the user's language
    vice, vice_auth = start(client, "demo_vice")
    assert client.post(f"/v1/conversations/{vice}/messages", json=ASK, headers=vice_auth).status_code == 200
    arbiter, arbiter_auth = start(client, "demo_arbiter")
    assert client.post(f"/v1/conversations/{arbiter}/messages", json=ASK, headers=arbiter_auth).status_code == 429


def test_a_user_may_keep_only_so_many_conversations_open(sqlite_url):
    app, _, _ = make_app(sqlite_url, max_open_conversations=2)
    client = app.test_client()
    first, _ = start(client)
    start(client)
    resp = client.post("/v1/conversations", json={"token": _token("demo_leader")})
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (429, "too_many_conversations")
    start(client, "demo_vice")  # someone else still may
    desk = app.extensions["chops"].desk
    with app.extensions["chops"].engine.begin() as conn:
        desk.request_person(conn, first, "demo_leader")
    desk.close(first, "sam")  # a closed conversation no longer counts
    assert client.post("/v1/conversations", json={"token": _token("demo_leader")}).status_code == 201


def _token(nickname: str) -> str:
    from tests.unit.web_support import user_token

    return user_token(nickname)


def _sign_in(client, name: str, password: str, address: str = "203.0.113.7"):
    return client.post("/console/login", data={"name": name, "password": password},
                       environ_overrides={"REMOTE_ADDR": address})


def test_failed_sign_ins_are_throttled_without_checking_the_password(sqlite_url, monkeypatch):
    app, _, engine = make_app(sqlite_url, signin_max_failures=3)
    add_staff(app, "sam")
    client = app.test_client()
    for _ in range(3):
        assert _sign_in(client, "sam", "wrong guess number one").status_code == 401
    checked = []
    from chops import staff_accounts

    real = staff_accounts.StaffAccounts.authenticate
    monkeypatch.setattr(staff_accounts.StaffAccounts, "authenticate",
                        lambda self, *a: checked.append(a) or real(self, *a))
    refused = _sign_in(client, "sam", STAFF_PASSWORD)  # even the right password is not checked now
    assert refused.status_code == 429 and checked == []
    assert re.search(r"try again in \d+ (s|minutes)", refused.get_data(as_text=True))
    assert int(refused.headers["Retry-After"]) > 0
    # the same account from another address: throttled too (per account) ...
    assert _sign_in(client, "sam", STAFF_PASSWORD, address="198.51.100.2").status_code == 429
    # ... and another account from the first address (per address)
    add_staff(app, "kim")
    assert _sign_in(client, "kim", STAFF_PASSWORD).status_code == 429
    add_staff(app, "lee")
    assert _sign_in(client, "lee", STAFF_PASSWORD, address="198.51.100.9").status_code == 302
    with engine.connect() as conn:
        rows = conn.execute(sa.select(t.signin_attempt.c.account, t.signin_attempt.c.outcome)
                            .order_by(t.signin_attempt.c.id)).all()
    assert [tuple(r) for r in rows] == [("sam", "failed")] * 3 + [("sam", "throttled")] * 2 + [("kim", "throttled")]


def test_a_throttled_sign_in_reads_the_same_for_an_unknown_account(sqlite_url):
    app, _, _ = make_app(sqlite_url, signin_max_failures=1)
    add_staff(app, "sam")
    pages = {}
    for name, address in (("sam", "203.0.113.1"), ("nobody", "203.0.113.2")):
        client = app.test_client()
        first = _sign_in(client, name, "wrong guess number one", address)
        second = _sign_in(client, name, "wrong guess number one", address)
        pages[name] = (first.status_code, second.status_code,
                       re.sub(r"\d+", "N", second.get_data(as_text=True)).replace(name, "NAME"))
    assert pages["sam"] == pages["nobody"]
    json_refusal = app.test_client().post("/console/login", data={"name": "sam", "password": "x" * 12},
                                          headers={"Accept": "application/json"},
                                          environ_overrides={"REMOTE_ADDR": "203.0.113.1"})
    assert json_refusal.get_json()["error"]["code"] == "signin_throttled"


def test_staff_requests_are_limited_per_member(sqlite_url):
    app, _, _ = make_app(sqlite_url, rate_limit_staff="3 per minute")
    client = app.test_client()
    headers = {"X-Staff-Key": "test-staff-key"}
    codes = [client.get("/v1/staff/conversations", headers=headers).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]


def test_pages_carry_the_security_headers_and_the_console_cookie_is_locked_down(sqlite_url):
    app, _, _ = make_app(sqlite_url, widget_frame_ancestors="https://host.example, https://shop.example")
    add_staff(app, "sam")
    client = app.test_client()
    widget = client.get("/widget?token=x")
    csp = widget.headers["Content-Security-Policy"]
    assert "frame-ancestors 'self' https://host.example https://shop.example" in csp
    nonce = re.search(r"'nonce-([^']+)'", csp).group(1)
    assert f'<script nonce="{nonce}">' in widget.get_data(as_text=True)  # the inline script may run
    assert "'unsafe-inline'" not in csp.split("style-src-attr")[0]  # no inline script or style element without it
    login = client.get("/console/login")
    assert "frame-ancestors 'none'" in login.headers["Content-Security-Policy"]
    assert login.headers["X-Frame-Options"] == "DENY"
    for resp in (widget, login, client.get("/healthz")):
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        assert resp.headers["Referrer-Policy"] == "same-origin"
    signed_in = _sign_in(client, "sam", STAFF_PASSWORD)
    cookie = signed_in.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "Secure" in cookie and "SameSite=Lax" in cookie


@pytest.mark.parametrize("demo_mode, secure", [(True, False), (False, True)])
def test_console_cookies_are_secure_outside_demo_mode(sqlite_url, demo_mode, secure):
    app, _, _ = make_app(sqlite_url, demo_mode=demo_mode)
    assert app.config["SESSION_COOKIE_SECURE"] is secure
