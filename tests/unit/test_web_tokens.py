"""User tokens are standard JWTs: host-site tokens minted with stock PyJWT (HS256 with the shared
secret, RS256/ES256 against a JWKS file) verify; expired, wrong-audience, wrong-issuer, ``alg: none``,
wrong-key, algorithm-confused and tampered tokens are refused with stable codes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from chops.web.tokens import TokenChecks, TokenError, sign_token, verify_token

SECRET = "shared-secret-of-at-least-32-bytes!"
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _b64(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def mint(claims: dict | None = None, key=SECRET, algorithm: str = "HS256", **headers) -> str:
    """A token as a host site mints it with PyJWT: sub + exp an hour ahead unless overridden (the
    parametrised cases are minted at collection time, long before they run in a full suite)."""
    body = {"sub": "demo_admin", "exp": int(time.time()) + 3600, **(claims or {})}
    return jwt.encode(body, key, algorithm=algorithm, headers=headers or None)


def refused(token: str, checks: TokenChecks = TokenChecks(), secret: str = SECRET) -> str:
    with pytest.raises(TokenError) as err:
        verify_token(token, secret, checks)
    return err.value.code


@pytest.fixture
def jwks_file(tmp_path):
    """A JWKS with one RSA (kid 'r1') and one EC (kid 'e1') public key, as the host site publishes it."""
    keys = [
        {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(RSA_KEY.public_key())), "kid": "r1", "alg": "RS256"},
        {**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(EC_KEY.public_key())), "kid": "e1", "alg": "ES256"},
    ]
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": keys}))
    return str(path)


def test_hs256_host_token_verifies_with_the_shared_secret():
    claims = verify_token(mint({"sub": "李老师"}), SECRET)
    assert claims.nickname == "李老师" and claims.conversation_id is None
    assert claims.expires_at > time.time()


def test_the_service_token_is_an_hs256_jwt_carrying_the_conversation():
    token = sign_token("demo_vice", SECRET, 60, conversation_id="c-1")
    assert jwt.get_unverified_header(token)["alg"] == "HS256"
    claims = verify_token(token, SECRET)
    assert (claims.nickname, claims.conversation_id) == ("demo_vice", "c-1")


@pytest.mark.parametrize("kid,key,alg", [("r1", RSA_KEY, "RS256"), ("e1", EC_KEY, "ES256")])
def test_asymmetric_host_tokens_verify_against_the_jwks(jwks_file, kid, key, alg):
    token = mint(key=key, algorithm=alg, kid=kid)
    assert verify_token(token, SECRET, TokenChecks(jwks=jwks_file)).nickname == "demo_admin"


def test_expired_beyond_the_leeway_is_token_expired_within_it_accepted():
    stale = mint({"exp": int(time.time()) - 10})
    assert verify_token(stale, SECRET, TokenChecks(leeway_s=30)).nickname == "demo_admin"
    assert refused(stale, TokenChecks(leeway_s=0)) == "token_expired"


def test_audience_and_issuer_are_checked_when_configured():
    checks = TokenChecks(audience="chops", issuer="https://host.example")
    good = mint({"aud": "chops", "iss": "https://host.example"})
    assert verify_token(good, SECRET, checks).nickname == "demo_admin"
    assert refused(mint({"aud": "another-service", "iss": "https://host.example"}), checks) == "token_invalid"
    assert refused(mint({"aud": "chops", "iss": "https://evil.example"}), checks) == "token_invalid"
    assert refused(mint(), checks) == "token_invalid"  # no aud at all
    # the service's own token carries the configured aud/iss, so it passes the same checks
    assert verify_token(sign_token("demo_vice", SECRET, 60, checks=checks), SECRET, checks).nickname == "demo_vice"


def test_alg_none_is_refused():
    unsigned = jwt.encode({"sub": "demo_admin", "exp": int(time.time()) + 60}, None, algorithm="none")
    assert refused(unsigned) == "token_invalid"


def test_wrong_secret_and_wrong_key_are_refused(jwks_file):
    assert refused(mint(key="another-secret-of-at-least-32-bytes")) == "token_invalid"
    forged = mint(key=OTHER_RSA_KEY, algorithm="RS256", kid="r1")
    assert refused(forged, TokenChecks(jwks=jwks_file)) == "token_invalid"
    assert refused(mint(key=RSA_KEY, algorithm="RS256", kid="nope"), TokenChecks(jwks=jwks_file)) == "token_invalid"


def test_rs256_without_a_configured_jwks_is_refused():
    assert refused(mint(key=RSA_KEY, algorithm="RS256")) == "token_invalid"


def test_hs256_signed_with_the_public_key_is_refused(jwks_file):
    """Algorithm confusion: HS256 is only ever checked against the shared secret, never a JWKS key."""
    public_pem = RSA_KEY.public_key().public_bytes(serialization.Encoding.PEM,
                                                    serialization.PublicFormat.SubjectPublicKeyInfo)
    header = _b64({"alg": "HS256", "typ": "JWT", "kid": "r1"})
    signing_input = header + "." + _b64({"sub": "demo_admin", "exp": int(time.time()) + 60})
    sig = base64.urlsafe_b64encode(hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest())
    token = f"{signing_input}.{sig.rstrip(b'=').decode()}"
    assert refused(token, TokenChecks(jwks=jwks_file)) == "token_invalid"


def test_a_key_of_one_type_cannot_verify_another_algorithm(jwks_file):
    # the RS256 key's kid on an ES256 token: the JWKS key's own algorithm must match the header
    assert refused(mint(key=EC_KEY, algorithm="ES256", kid="r1"), TokenChecks(jwks=jwks_file)) == "token_invalid"


def test_tampered_claims_break_the_signature():
    header, _, sig = mint({"sub": "demo_leader"}).split(".")
    forged = _b64({"sub": "demo_admin", "exp": int(time.time()) + 60})
    assert refused(f"{header}.{forged}.{sig}") == "token_invalid"


@pytest.mark.parametrize("token", [
    "", "no-dot", "a.b", "a.b.c", "ünïcode.sig.x", "x" * 9000,
    mint({"sub": None}),          # no nickname
    mint({"sub": ""}),            # empty nickname
    mint({"exp": None}),          # no expiry
    mint({"exp": "tomorrow"}),    # expiry not a number
    mint({"cid": 7}),             # conversation id not a string
])
def test_malformed_tokens_are_invalid(token):
    assert refused(token) == "token_invalid"


def test_no_secret_verifies_nothing_and_signs_nothing():
    assert refused(mint(), secret="") == "token_invalid"
    with pytest.raises(ValueError):
        sign_token("demo_leader", "", 60)
    with pytest.raises(ValueError):
        sign_token("", SECRET, 60)


def serve_jwks(jwks_file):
    """The JWKS served over HTTP by a real server on 127.0.0.1, as a host site publishes it: (server, url)."""
    import http.server
    import threading

    body = open(jwks_file, "rb").read()

    class Keys(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Keys)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/.well-known/jwks.json"


def stop(server) -> None:
    server.shutdown()
    server.server_close()


def test_asymmetric_host_tokens_verify_against_a_jwks_url(jwks_file):
    server, url = serve_jwks(jwks_file)
    try:
        checks = TokenChecks(jwks=url)
        assert verify_token(mint(key=EC_KEY, algorithm="ES256", kid="e1"), SECRET, checks).nickname == "demo_admin"
        assert refused(mint(key=OTHER_RSA_KEY, algorithm="RS256", kid="r1"), checks) == "token_invalid"
    finally:
        stop(server)


def test_the_api_applies_the_configured_audience_to_user_and_conversation_tokens(sqlite_url):
    from tests.unit.web_support import SECRET as WEB_SECRET
    from tests.unit.web_support import make_app

    app, _, _ = make_app(sqlite_url, jwt_audience="chops", jwt_issuer="https://host.example")
    client = app.test_client()
    good = {"aud": "chops", "iss": "https://host.example", "sub": "demo_vice"}
    wrong = client.post("/v1/conversations", json={"token": mint({**good, "aud": "other"}, key=WEB_SECRET)})
    assert (wrong.status_code, wrong.get_json()["error"]["code"]) == (401, "token_invalid")
    expired = client.post("/v1/conversations", json={"token": mint({**good, "exp": int(time.time()) - 600},
                                                                   key=WEB_SECRET)})
    assert (expired.status_code, expired.get_json()["error"]["code"]) == (401, "token_expired")
    resp = client.post("/v1/conversations", json={"token": mint(good, key=WEB_SECRET)})
    assert resp.status_code == 201
    body = resp.get_json()
    claims = jwt.decode(body["token"], WEB_SECRET, algorithms=["HS256"], audience="chops")
    assert (claims["sub"], claims["cid"], claims["iss"]) == ("demo_vice", body["id"], "https://host.example")
    history = client.get(f"/v1/conversations/{body['id']}", headers={"Authorization": f"Bearer {body['token']}"})
    assert history.status_code == 200


@pytest.mark.parametrize("leeway", [-1, 301])
def test_the_clock_skew_setting_is_bounded(leeway):
    from pydantic import ValidationError

    from chops.settings import get_settings

    with pytest.raises(ValidationError):
        get_settings(jwt_leeway_s=leeway)


def test_an_unreachable_jwks_url_is_an_outage_not_a_bad_token(jwks_file, sqlite_url):
    """The host site's key server on 127.0.0.1 answers, then goes down: keys already fetched are used for
    their time to live; a key never fetched cannot be checked, which is 503 jwks_unavailable, not 401."""
    from chops.web import tokens
    from tests.unit.web_support import make_app

    server, url = serve_jwks(jwks_file)
    tokens._jwks_client.cache_clear()
    app, _, _ = make_app(sqlite_url, jwks=url)
    client = app.test_client()
    claims = {"sub": "demo_admin", "exp": int(time.time()) + 600}
    ec_token = jwt.encode(claims, EC_KEY, algorithm="ES256", headers={"kid": "e1"})
    assert client.post("/v1/conversations", json={"token": ec_token}).status_code == 201  # fetched and cached
    stop(server)
    assert client.post("/v1/conversations", json={"token": ec_token}).status_code == 201  # within its TTL
    tokens._jwks_client.cache_clear()  # a new process (or the TTL passed): the keys must be fetched again
    down = client.post("/v1/conversations", json={"token": ec_token})
    assert (down.status_code, down.get_json()["error"]["code"]) == (503, "jwks_unavailable")
