"""Named staff accounts (``chops_staff_account``): ``chops staff add/list/disable`` and console sign-in.

Passwords are hashed with ``werkzeug.security`` (it ships with Flask, so no new dependency): scrypt,
N=2^15, r=8, p=1, a random 16-character salt, the parameters stored in the hash, checked with
``hmac.compare_digest``. A sign-in with an unknown name checks the password against a dummy hash, so
it costs the same time as a wrong password: the answer never tells which names exist.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timezone
from functools import cache

import sqlalchemy as sa
from pydantic import BaseModel
from werkzeug.security import check_password_hash, generate_password_hash

from chops import tables as t
from chops.store import StoreError

HASH_METHOD = "scrypt:32768:8:1"  # werkzeug's default in 3.x, pinned so a library upgrade cannot weaken it
NAME = re.compile(r"[a-z0-9][a-z0-9._@-]{0,63}")
MIN_PASSWORD, MAX_PASSWORD = 12, 1024  # the cap bounds the work an anonymous sign-in can cause


class StaffError(StoreError):
    """An account request that cannot be done; ``code`` is stable (``invalid_name``, ``name_taken``,
    ``weak_password``, ``not_found``)."""


class StaffAccount(BaseModel):
    """One staff member (never the password hash)."""

    name: str
    display_name: str
    created_at: datetime
    disabled: bool


@cache
def _dummy_hash() -> str:
    return generate_password_hash(secrets.token_urlsafe(16), method=HASH_METHOD)


def valid_name(name: object) -> bool:
    """True for a well-formed account name: lower-case letters, digits and ``._@-``, 1-64 characters."""
    return isinstance(name, str) and NAME.fullmatch(name) is not None


class StaffAccounts:
    """The staff accounts in one database."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def add(self, name: str, password: str, display_name: str | None = None) -> StaffAccount:
        """Create an enabled account; ``display_name`` defaults to ``name``."""
        if not valid_name(name):
            raise StaffError("invalid_name", "a name is 1-64 lower-case letters, digits or . _ @ - "
                             "(starting with a letter or digit)")
        if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            raise StaffError("weak_password", f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters")
        display = (display_name or name).strip()[:128] or name
        row = {"name": name, "display_name": display, "created_at": datetime.now(timezone.utc).replace(tzinfo=None),
               "password_hash": generate_password_hash(password, method=HASH_METHOD), "disabled": False}
        try:
            with self.engine.begin() as conn:
                conn.execute(t.staff_account.insert().values(row))
        except sa.exc.IntegrityError:
            raise StaffError("name_taken", f"there is already a staff account {name!r}") from None
        return StaffAccount(**row)

    def list(self) -> list[StaffAccount]:
        """Every account, by name."""
        return self._accounts(sa.true())

    def get(self, name: str) -> StaffAccount | None:
        """The account called ``name`` (enabled or not), or None."""
        rows = self._accounts(t.staff_account.c.name == name) if valid_name(name) else []
        return rows[0] if rows else None

    def active(self, name: object) -> StaffAccount | None:
        """The enabled account called ``name``, or None (unknown, malformed or disabled)."""
        account = self.get(name) if isinstance(name, str) else None
        return account if account is not None and not account.disabled else None

    def disable(self, name: str) -> None:
        """Disable an account: it cannot sign in, and its open console sessions stop working."""
        with self.engine.begin() as conn:
            done = conn.execute(t.staff_account.update().where(t.staff_account.c.name == name)
                                .values(disabled=True)).rowcount
        if not done:
            raise StaffError("not_found", f"no staff account {name!r}")

    def authenticate(self, name: str, password: str) -> StaffAccount | None:
        """The enabled account whose password this is, else None (the same answer, in about the same
        time, for an unknown name, a wrong password and a disabled account)."""
        password = password[:MAX_PASSWORD + 1]
        row = None
        if valid_name(name):
            with self.engine.connect() as conn:
                row = conn.execute(sa.select(t.staff_account).where(t.staff_account.c.name == name)).mappings().first()
        if row is None:
            check_password_hash(_dummy_hash(), password)
            return None
        if not check_password_hash(row["password_hash"], password) or row["disabled"]:
            return None
        return StaffAccount(**{k: row[k] for k in StaffAccount.model_fields})

    def _accounts(self, where) -> list[StaffAccount]:
        cols = [t.staff_account.c[k] for k in StaffAccount.model_fields]
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(*cols).where(where).order_by(t.staff_account.c.name)).mappings()
            return [StaffAccount(**r) for r in rows]


def record_signin_attempt(engine: sa.Engine, account: str, address: str, outcome: str) -> None:
    """Keep a failed or throttled sign-in (``outcome``) in ``chops_signin_attempt``: who was tried, from
    where, when. The name is kept as typed (cut to 64 characters), whether or not such an account exists."""
    with engine.begin() as conn:
        conn.execute(t.signin_attempt.insert().values(at=datetime.now(timezone.utc).replace(tzinfo=None),
                                                      account=account[:64], address=address[:64], outcome=outcome))
