"""Signed user tokens: the host site proves who the chatting user is, with a standard JWT (PyJWT).

Accepted: HS256 signed with the shared ``CHOPS_SECRET_KEY``, or RS256/ES256 signed with a key of the
configured JWKS (``CHOPS_JWKS``: a file path or an https URL). Claims: ``sub`` = the user's nickname
and ``exp`` are required; ``aud`` and ``iss`` are checked when ``CHOPS_JWT_AUDIENCE`` /
``CHOPS_JWT_ISSUER`` are set; clocks may differ by ``CHOPS_JWT_LEEWAY_S`` (bounded in settings).
The conversation tokens this service issues to the widget are HS256 JWTs of the same shape plus
``cid`` (the conversation id), so there is one format and one library.

The algorithm is chosen from a fixed list per key type before anything is verified: ``none``, an
HS256 token "signed" with a public key, or any other algorithm is refused (algorithm confusion).
The old home-made format (HMAC over base64 JSON) is gone: every host-site language has a stock JWT
library, and one format means one verification path to keep safe.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path

import jwt

ASYMMETRIC_ALGORITHMS = ("RS256", "ES256")
MAX_TOKEN_CHARS = 8192


class TokenError(Exception):
    """A token was refused. ``code``: ``token_invalid`` (malformed, bad signature, wrong audience,
    issuer or key) or ``token_expired``."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class TokenClaims:
    """What a valid token says: the user, until when, and (optionally) which conversation."""

    nickname: str
    expires_at: int
    conversation_id: str | None = None


@dataclass(frozen=True)
class TokenChecks:
    """What a token must satisfy beyond its signature (from settings; see ``checks_from``)."""

    audience: str | None = None
    issuer: str | None = None
    leeway_s: float = 30.0
    jwks: str | None = None  # a JWKS file path or URL for RS256/ES256 host-site tokens


def checks_from(settings) -> TokenChecks:
    """The token checks configured in ``chops.settings.Settings``."""
    return TokenChecks(audience=settings.jwt_audience, issuer=settings.jwt_issuer,
                       leeway_s=settings.jwt_leeway_s, jwks=settings.jwks)


def sign_token(nickname: str, secret: str, ttl: float, *, conversation_id: str | None = None,
               checks: TokenChecks = TokenChecks(), now: float | None = None) -> str:
    """An HS256 JWT for ``nickname`` valid for ``ttl`` seconds from ``now`` (default: the current time).

    It carries the configured ``aud``/``iss`` so it passes the same checks as a host-site token."""
    if not nickname:
        raise ValueError("a token needs a nickname")
    if not secret:
        raise ValueError("a token needs a secret")
    issued = int(time.time() if now is None else now)
    claims: dict = {"sub": nickname, "iat": issued, "exp": int(issued + ttl)}
    if conversation_id is not None:
        claims["cid"] = conversation_id
    if checks.audience:
        claims["aud"] = checks.audience
    if checks.issuer:
        claims["iss"] = checks.issuer
    return jwt.encode(claims, secret, algorithm="HS256")


JWKS_TTL_S = 300  # how long a fetched key set is used before it is fetched again


@functools.lru_cache(maxsize=4)
def _jwks_client(url: str) -> jwt.PyJWKClient:
    # One client per URL for the process: it caches the fetched keys (refetching on an unknown kid).
    return jwt.PyJWKClient(url, cache_keys=True, lifespan=JWKS_TTL_S, timeout=5)


def _jwks_key(token: str, header: dict, jwks: str) -> jwt.PyJWK:
    """The JWKS key that signed ``token`` (by ``kid``; a one-key set needs no ``kid``)."""
    if jwks.startswith(("https://", "http://")):
        return _jwks_client(jwks).get_signing_key_from_jwt(token)
    keys = jwt.PyJWKSet.from_json(Path(jwks).read_text(encoding="utf-8")).keys
    kid = header.get("kid")
    matching = [k for k in keys if k.key_id == kid] if kid else keys
    if len(matching) != 1:
        raise TokenError("token_invalid", "no single key of the configured JWKS matches the token's kid")
    return matching[0]


def _key_for(token: str, secret: str, checks: TokenChecks):
    """(verification key, allowed algorithm) for ``token``'s header, or ``TokenError``."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError:
        raise TokenError("token_invalid", "the token is not a JWT") from None
    alg = header.get("alg")
    if alg == "HS256":
        if not secret:
            raise TokenError("token_invalid", "the service has no secret to verify HS256 tokens with")
        return secret, alg
    if alg in ASYMMETRIC_ALGORITHMS and checks.jwks:
        try:
            key = _jwks_key(token, header, checks.jwks)
        except jwt.PyJWKClientConnectionError as exc:
            # The host site's key server is down: the token may be fine, so this is an outage (503), not a
            # bad token (401). The client caches the fetched set for JWKS_TTL_S, so a blip only hurts the
            # first request after the set expired.
            raise TokenError("jwks_unavailable", f"the JWKS URL cannot be reached: {exc}") from None
        except (jwt.PyJWKError, jwt.PyJWKClientError, OSError, ValueError) as exc:
            raise TokenError("token_invalid", f"no key of the configured JWKS verifies the token: {exc}") from None
        if key.algorithm_name != alg:
            raise TokenError("token_invalid", f"the JWKS key is for {key.algorithm_name}, the token says {alg}")
        return key, alg
    allowed = "HS256" + (", " + ", ".join(ASYMMETRIC_ALGORITHMS) if checks.jwks else "")
    raise TokenError("token_invalid", f"the token's algorithm {alg!r} is not accepted (accepted: {allowed})")


def verify_token(token: str, secret: str, checks: TokenChecks = TokenChecks()) -> TokenClaims:
    """The claims of ``token`` if its signature, expiry, audience and issuer are right; else ``TokenError``."""
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS:
        raise TokenError("token_invalid", "the token is malformed")
    key, alg = _key_for(token, secret, checks)
    try:
        claims = jwt.decode(
            token, key, algorithms=[alg], audience=checks.audience, issuer=checks.issuer,
            leeway=checks.leeway_s,
            options={"require": ["sub", "exp"], "verify_aud": checks.audience is not None},
        )
    except jwt.ExpiredSignatureError:
        raise TokenError("token_expired", "the token has expired") from None
    except jwt.InvalidTokenError as exc:
        raise TokenError("token_invalid", f"the token was refused: {exc}") from None
    sub, cid = claims.get("sub"), claims.get("cid")
    if not isinstance(sub, str) or not sub:
        raise TokenError("token_invalid", "the token lacks a nickname (sub)")
    if cid is not None and not isinstance(cid, str):
        raise TokenError("token_invalid", "the token's conversation id (cid) is not a string")
    return TokenClaims(nickname=sub, expires_at=int(claims["exp"]), conversation_id=cid)
