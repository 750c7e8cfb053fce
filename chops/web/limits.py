"""Rate limits: per signed-in user, per conversation, for the whole service, for staff, and staff sign-in.

Built on ``limits``, the library under Flask-Limiter, used directly: Flask-Limiter binds its limits to
view functions at import time, shared by every app a process builds (the tests build hundreds), while
these live in the app's ``Services`` with their own storage. The storage is ``rate_limit_storage``:
``memory://`` counts per process (the documented single-worker deployment); ``redis://…`` is shared by
every worker. Moving windows: a burst at a window's edge cannot double the rate.

A refused request stores nothing and calls no model: it is ``429 rate_limited`` (or ``signin_throttled``)
with ``Retry-After``. The user's key is the nickname of the verified token, never a body field.
"""

from __future__ import annotations

import math
import time
from datetime import timedelta

import sqlalchemy as sa
from limits import RateLimitItem, parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from chops import tables as t
from chops.i18n import N_, translate
from chops.settings import Settings
from chops.store_base import now
from chops.web.errors import ApiError, retry_later

OPEN_WINDOW = timedelta(hours=1)  # a conversation active this recently (and not closed) counts as open


class RateLimits:
    """The app's limits over one storage."""

    def __init__(self, settings: Settings) -> None:
        """Parse every limit from ``settings`` (a malformed one fails at start-up, not on a request)."""
        self.window = MovingWindowRateLimiter(storage_from_string(settings.rate_limit_storage))
        self.turn_limits: list[tuple[str, RateLimitItem]] = [
            ("conversation", parse(settings.rate_limit_conversation)), ("user", parse(settings.rate_limit_user)),
            ("service", parse(settings.rate_limit_global))]
        self.staff_limit = parse(settings.rate_limit_staff)
        self.signin_limit = parse(f"{settings.signin_max_failures} per {settings.signin_window_s} seconds")
        self.max_open = settings.max_open_conversations

    def check_turn(self, nickname: str, conversation_id: str, lang: str) -> None:
        """``429 rate_limited`` when a message limit is used up (counts nothing: ``count_turn`` does, once
        the message is taken, so a message the busy model's queue refused costs the user nothing)."""
        for item, *ids in self._turn_keys(nickname, conversation_id):
            if not self.window.test(item, *ids):
                seconds = self._retry_after(item, *ids)
                raise retry_later("rate_limited", translate(lang, N_(
                    "You are sending messages faster than they can be answered. Please wait {seconds} s."),
                    seconds=seconds), seconds)

    def count_turn(self, nickname: str, conversation_id: str) -> None:
        """Count one message taken (answered, or held for staff) against every message limit."""
        for item, *ids in self._turn_keys(nickname, conversation_id):
            self.window.hit(item, *ids)

    def _turn_keys(self, nickname: str, conversation_id: str) -> list[tuple[RateLimitItem, str, str]]:
        keys = {"conversation": conversation_id, "user": nickname, "service": "all"}
        return [(item, f"turn-{scope}", keys[scope]) for scope, item in self.turn_limits]

    def check_open_conversations(self, engine: sa.Engine, nickname: str) -> None:
        """``429 too_many_conversations`` when the user already has ``max_open_conversations`` open."""
        c, s = t.conversation, t.conversation_state
        query = (sa.select(sa.func.count()).select_from(c.outerjoin(s, s.c.conversation_id == c.c.id))
                 .where(c.c.nickname == nickname, c.c.channel == "widget", c.c.updated_at >= now() - OPEN_WINDOW,
                        sa.or_(s.c.state.is_(None), s.c.state != "closed")))
        with engine.connect() as conn:
            if conn.execute(query).scalar_one() >= self.max_open:
                raise ApiError(429, "too_many_conversations", f"you have {self.max_open} open conversations; go on "
                               "in one of them (a conversation idle for an hour no longer counts)",
                               limit=self.max_open)

    def check_staff(self, who: str) -> None:
        """Count one staff request by ``who`` (their name, or their address before sign-in)."""
        if not self.window.hit(self.staff_limit, "staff", who):
            seconds = self._retry_after(self.staff_limit, "staff", who)
            raise retry_later("rate_limited", f"too many staff requests; wait {seconds} s", seconds)

    def signin_wait(self, account: str, address: str) -> int | None:
        """Seconds until a sign-in for ``account`` from ``address`` may be checked again, or None when it may
        be checked now (both have failed fewer than ``signin_max_failures`` times in the window)."""
        waits = [self._retry_after(self.signin_limit, *ids) for ids in _signin_keys(account, address)
                 if not self.window.test(self.signin_limit, *ids)]
        return max(waits) if waits else None

    def signin_failed(self, account: str, address: str) -> None:
        """Count a failed sign-in against the account name and the address."""
        for ids in _signin_keys(account, address):
            self.window.hit(self.signin_limit, *ids)

    def _retry_after(self, item: RateLimitItem, *ids: str) -> int:
        reset = self.window.get_window_stats(item, *ids).reset_time
        return max(1, math.ceil(reset - time.time()))


def _signin_keys(account: str, address: str) -> list[tuple[str, str]]:
    # Names are compared as the login compares them (case-folded), so "Sam" and "sam" share one budget.
    return [("signin-account", account.strip().casefold()[:64]), ("signin-address", address)]
