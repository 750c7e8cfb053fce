"""Signed user tokens: the host site proves who the chatting user is.

Format (easy to produce in any language): ``<payload>.<signature>`` where ``payload`` is the
base64url (no padding) of the compact JSON ``{"sub": nickname, "exp": unix_seconds}`` (plus
``"cid": conversation_id`` for a token the service issues for one conversation) and
``signature`` is the base64url (no padding) of ``HMAC-SHA256(secret, payload)`` computed over the
ASCII bytes of ``payload``. The secret is ``CHOPS_SECRET_KEY``, shared with the host site.

The standard library is enough here (hmac, hashlib, base64, json); ``itsdangerous`` would tie the
host site to its Python-specific format.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from dataclasses import dataclass


class TokenError(Exception):
    """A token was refused. ``code``: ``token_invalid`` (malformed or bad signature) or ``token_expired``."""

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


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signature(payload: str, secret: str) -> str:
    return _b64encode(hmac.new(secret.encode("utf-8"), payload.encode("ascii"), hashlib.sha256).digest())


def sign_token(nickname: str, secret: str, ttl: float, *, conversation_id: str | None = None,
               now: float | None = None) -> str:
    """A token for ``nickname`` valid for ``ttl`` seconds from ``now`` (default: the current time)."""
    if not nickname:
        raise ValueError("a token needs a nickname")
    if not secret:
        raise ValueError("a token needs a secret")
    claims: dict = {"sub": nickname, "exp": int((time.time() if now is None else now) + ttl)}
    if conversation_id is not None:
        claims["cid"] = conversation_id
    payload = _b64encode(json.dumps(claims, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    return f"{payload}.{_signature(payload, secret)}"


def verify_token(token: str, secret: str, *, now: float | None = None) -> TokenClaims:
    """The claims of ``token`` if its signature is right and it has not expired; else ``TokenError``.

    The signature is checked (in constant time) before the payload is parsed, so nothing the
    sender wrote is interpreted unless the host site signed it.
    """
    if not isinstance(token, str) or token.count(".") != 1 or len(token) > 4096:
        raise TokenError("token_invalid", "the token is malformed")
    payload, signature = token.split(".")
    try:
        payload.encode("ascii")
        signature.encode("ascii")
    except UnicodeEncodeError:
        raise TokenError("token_invalid", "the token is malformed") from None
    if not secret or not hmac.compare_digest(signature, _signature(payload, secret)):
        raise TokenError("token_invalid", "the token signature does not match")
    try:
        claims = json.loads(_b64decode(payload))
    except (binascii.Error, ValueError):
        raise TokenError("token_invalid", "the token payload is not valid JSON") from None
    if not isinstance(claims, dict):
        raise TokenError("token_invalid", "the token payload is not an object")
    sub, exp, cid = claims.get("sub"), claims.get("exp"), claims.get("cid")
    if not isinstance(sub, str) or not sub or not isinstance(exp, (int, float)) or isinstance(exp, bool):
        raise TokenError("token_invalid", "the token lacks a nickname (sub) or an expiry (exp)")
    if cid is not None and not isinstance(cid, str):
        raise TokenError("token_invalid", "the token's conversation id (cid) is not a string")
    if (time.time() if now is None else now) >= exp:
        raise TokenError("token_expired", "the token has expired")
    return TokenClaims(nickname=sub, expires_at=int(exp), conversation_id=cid)
