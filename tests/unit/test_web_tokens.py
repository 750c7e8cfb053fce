"""Signed user tokens: round trip, expiry, tampering, malformed input, and the documented format."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from chops.web.tokens import TokenError, sign_token, verify_token

SECRET = "shared-secret"
NOW = 1_800_000_000


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def host_site_token(claims: dict, secret: str = SECRET) -> str:
    """A token built from the documented format only, as a host site in another language would."""
    payload = _b64(json.dumps(claims).encode())
    sig = _b64(hmac.new(secret.encode(), payload.encode(), hashlib.sha256).digest())
    return f"{payload}.{sig}"


def test_round_trip_carries_the_nickname_and_expiry():
    claims = verify_token(sign_token("demo_leader", SECRET, 60, now=NOW), SECRET, now=NOW + 59)
    assert (claims.nickname, claims.expires_at, claims.conversation_id) == ("demo_leader", NOW + 60, None)


def test_conversation_claim_round_trips():
    token = sign_token("demo_vice", SECRET, 60, conversation_id="c-1", now=NOW)
    assert verify_token(token, SECRET, now=NOW).conversation_id == "c-1"


def test_unicode_nickname_round_trips():
    assert verify_token(sign_token("李老师", SECRET, 60, now=NOW), SECRET, now=NOW).nickname == "李老师"


@pytest.mark.parametrize("later", [60, 61, 10_000])
def test_expired_at_and_after_the_expiry(later):
    token = sign_token("demo_leader", SECRET, 60, now=NOW)
    with pytest.raises(TokenError) as err:
        verify_token(token, SECRET, now=NOW + later)
    assert err.value.code == "token_expired"


def test_a_host_site_token_built_from_the_documented_format_verifies():
    claims = verify_token(host_site_token({"sub": "demo_admin", "exp": NOW + 5}), SECRET, now=NOW)
    assert claims.nickname == "demo_admin"


def test_wrong_secret_is_invalid():
    with pytest.raises(TokenError) as err:
        verify_token(sign_token("demo_leader", SECRET, 60, now=NOW), "another-secret", now=NOW)
    assert err.value.code == "token_invalid"


def test_changing_the_nickname_breaks_the_signature():
    token = sign_token("demo_leader", SECRET, 60, now=NOW)
    forged_payload = _b64(json.dumps({"sub": "demo_admin", "exp": NOW + 60}).encode())
    with pytest.raises(TokenError) as err:
        verify_token(forged_payload + "." + token.split(".")[1], SECRET, now=NOW)
    assert err.value.code == "token_invalid"


@pytest.mark.parametrize("token", [
    "", "no-dot", "a.b.c", "ünïcode.sig", "%%%.%%%", "x" * 5000,
    host_site_token({"sub": "x", "exp": NOW + 5}, secret="other"),
    host_site_token({"exp": NOW + 5}),                 # no nickname
    host_site_token({"sub": "", "exp": NOW + 5}),      # empty nickname
    host_site_token({"sub": "x"}),                     # no expiry
    host_site_token({"sub": "x", "exp": "tomorrow"}),  # expiry not a number
    host_site_token({"sub": "x", "exp": True}),        # a bool is not a time
    host_site_token({"sub": "x", "exp": NOW + 5, "cid": 7}),
    host_site_token(["sub", "x"]),                     # not an object
])
def test_malformed_tokens_are_invalid(token):
    with pytest.raises(TokenError) as err:
        verify_token(token, SECRET, now=NOW)
    assert err.value.code == "token_invalid"


def test_a_non_json_payload_with_a_valid_signature_is_invalid():
    payload = _b64(b"not json")
    sig = _b64(hmac.new(SECRET.encode(), payload.encode(), hashlib.sha256).digest())
    with pytest.raises(TokenError) as err:
        verify_token(f"{payload}.{sig}", SECRET, now=NOW)
    assert err.value.code == "token_invalid"


def test_no_secret_verifies_nothing_and_signs_nothing():
    with pytest.raises(TokenError):
        verify_token(sign_token("demo_leader", SECRET, 60), "")
    with pytest.raises(ValueError):
        sign_token("demo_leader", "", 60)
    with pytest.raises(ValueError):
        sign_token("", SECRET, 60)
