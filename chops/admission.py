"""Admission control: turns wait in one bounded FIFO queue in front of the model.

Two cores run a couple of turns at once well; two dozen at once all crawl and run past the model's
timeout together. So at most ``capacity`` turns run, the others wait in order of arrival, and a turn
whose expected wait is over ``max_wait_s`` is refused at once (``Busy``: the web API answers ``429 busy``
with ``Retry-After``, stores nothing and calls no model).

The queue is the table ``chops_admission_ticket``, so every worker process of a deployment (one with the
embedded model, several with a shared model server) agrees on it: the live tickets ordered by id, of
which the first ``capacity`` run. A waiting turn polls its rank (an indexed count), and a worker wakes
its own waiters at once when one of its turns ends (an in-process condition wakes listeners; the table
holds the truth). A ticket whose worker died stops counting at ``expires_at``: a waiting ticket pushes
its expiry forward as it polls, a running one expires ``turn_budget_s`` after admission.

The expected wait is ``(rank - capacity + 1) / capacity * turn_s``, ``turn_s`` being a moving average of
this process's admitted turns (how long a turn takes under the load it runs in).
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import sqlalchemy as sa

from chops.tables import admission_ticket as tickets
from chops.i18n import N_, translate
from chops.store_base import now

log = logging.getLogger(__name__)

EWMA_WEIGHT = 0.2  # how much the newest turn moves the average: a few turns follow a change of load
REFRESH_S = 5.0  # how often a waiting ticket pushes its expiry forward


class Busy(Exception):
    """The queue is too long: the turn would wait about ``wait_s`` (``ahead`` turns before it)."""

    def __init__(self, wait_s: float, ahead: int, retry_after_s: int) -> None:
        super().__init__(f"expected wait {wait_s:.0f} s")
        self.wait_s, self.ahead, self.retry_after_s = wait_s, ahead, retry_after_s


@dataclass
class Ticket:
    """A turn's place in the queue."""

    id: int
    admitted_at: float | None = None  # monotonic clock, once it may run

    @property
    def admitted(self) -> bool:
        """True once the ticket may run."""
        return self.admitted_at is not None


class Admission:
    """The FIFO queue in front of the model, over the agent's database."""

    def __init__(self, engine: sa.Engine, *, capacity: int, max_wait_s: float, turn_s: float,
                 turn_budget_s: float, poll_s: float = 0.25) -> None:
        """``capacity`` turns run at once; ``turn_s`` is the first guess of one turn's length;
        ``turn_budget_s`` is how long an admitted ticket counts at most (a crashed worker's)."""
        self.engine, self.capacity, self.max_wait_s = engine, capacity, max_wait_s
        self.turn_budget_s, self.poll_s = turn_budget_s, poll_s
        self._turn_s = turn_s
        self._writer = engine.execution_options(sqlite_begin="immediate")
        self._wake = threading.Condition()
        self._swept = 0.0

    @property
    def turn_s(self) -> float:
        """The moving average of an admitted turn's length (seconds)."""
        return self._turn_s

    def expected_wait(self, rank: int) -> float:
        """Seconds a turn with ``rank`` live tickets before it waits until it runs."""
        return max(0, rank - self.capacity + 1) / self.capacity * self._turn_s

    def enter(self, conversation_id: str) -> Ticket:
        """Take a place in the queue, or raise ``Busy`` (nothing kept) when the wait would be too long."""
        self._sweep()
        with self.engine.connect() as conn:
            rank = conn.execute(sa.select(sa.func.count()).select_from(tickets)
                                .where(tickets.c.expires_at >= now())).scalar_one()
        wait = self.expected_wait(rank)
        if wait > self.max_wait_s:
            raise Busy(wait, rank, self._retry_after(wait))
        stamp = now()
        # No lock between the count and the insert: two turns arriving together may both be let in on one
        # count (the queue is one longer than the limit for a moment), which is cheaper than serialising
        # every arrival; the turn's real place is its rank in ``wait``.
        with self._writer.begin() as conn:
            ticket_id = conn.execute(tickets.insert().values(
                conversation_id=conversation_id[:64], created_at=stamp,
                expires_at=stamp + timedelta(seconds=self.max_wait_s * 3))).inserted_primary_key[0]
        return Ticket(id=int(ticket_id))

    def wait(self, ticket: Ticket, on_wait: Callable[[int, float], None] | None = None) -> None:
        """Block until ``ticket`` may run; ``on_wait(ahead, wait_s)`` whenever its place changes (``ahead``:
        waiting turns before it)."""
        last_ahead, refreshed = None, time.monotonic()
        while True:
            with self.engine.connect() as conn:
                rank = conn.execute(sa.select(sa.func.count()).select_from(tickets).where(
                    tickets.c.id < ticket.id, tickets.c.expires_at >= now())).scalar_one()
            if rank < self.capacity:
                break
            ahead = rank - self.capacity
            if on_wait is not None and ahead != last_ahead:
                on_wait(ahead, self.expected_wait(rank))
            last_ahead = ahead
            if time.monotonic() - refreshed > REFRESH_S:
                self._set_expiry(ticket, self.max_wait_s * 3)
                refreshed = time.monotonic()
            with self._wake:
                self._wake.wait(self.poll_s)
        self._set_expiry(ticket, self.turn_budget_s, admitted=True)
        ticket.admitted_at = time.monotonic()

    def leave(self, ticket: Ticket) -> None:
        """Give the place up (the turn ended, however it ended); an admitted turn's length updates the
        average."""
        with self._writer.begin() as conn:
            conn.execute(tickets.delete().where(tickets.c.id == ticket.id))
        if ticket.admitted_at is not None:
            took = time.monotonic() - ticket.admitted_at
            self._turn_s = (1 - EWMA_WEIGHT) * self._turn_s + EWMA_WEIGHT * took
        with self._wake:
            self._wake.notify_all()

    def _sweep(self) -> None:
        """Delete expired tickets (dead workers'), at most once a second per process. Housekeeping only (the
        queries ignore expired rows), done in its own transaction: a range delete in the same transaction as
        an insert deadlocked with concurrent arrivals on MariaDB, and a conflict here can wait for the next."""
        if time.monotonic() - self._swept < 1.0:
            return
        self._swept = time.monotonic()
        try:
            with self._writer.begin() as conn:
                conn.execute(tickets.delete().where(tickets.c.expires_at < now()))
        except sa.exc.OperationalError:
            log.info("admission: expired tickets left for the next sweep (lock conflict)")

    def _set_expiry(self, ticket: Ticket, seconds: float, *, admitted: bool = False) -> None:
        stamp = now()
        values = {"expires_at": stamp + timedelta(seconds=seconds)}
        if admitted:
            values["admitted_at"] = stamp
        with self._writer.begin() as conn:
            conn.execute(tickets.update().where(tickets.c.id == ticket.id).values(**values))

    def _retry_after(self, wait_s: float) -> int:
        # When the queue should have room again, spread a little so refused users do not all come back
        # in the same second.
        base = max(1.0, wait_s - self.max_wait_s)
        return math.ceil(base + random.uniform(0, self._turn_s / self.capacity))


def queue_notice(lang: str, ahead: int, wait_s: float) -> str:
    """What a waiting user is told of their place: "2 people ahead of you, about 15 s."."""
    seconds = max(1, round(wait_s))
    if ahead == 0:
        return translate(lang, N_("You are next, about {seconds} s."), seconds=seconds)
    if ahead == 1:
        return translate(lang, N_("1 person ahead of you, about {seconds} s."), seconds=seconds)
    return translate(lang, N_("{ahead} people ahead of you, about {seconds} s."), ahead=ahead, seconds=seconds)


def busy_notice(lang: str, retry_after_s: int) -> str:
    """What a refused user is told (``429 busy``): nothing was sent on, so trying again is safe."""
    return translate(lang, N_("Many people are asking right now, so your message was not sent on and nothing "
                              "was changed. Please try again in {seconds} s."), seconds=retry_after_s)
