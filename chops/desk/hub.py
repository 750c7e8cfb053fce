"""Wake-ups for the conversation event streams of one process.

The database holds the truth; this only tells a waiting stream *when* to read it again. One poller
thread per process (started while anyone listens, gone when nobody does) asks the database, every
``poll_s``, for the newest event id of each conversation someone listens to: one grouped query over
the ``(conversation_id, id)`` index, however many streams are open, so the database load is bounded
by the number of processes, not of widgets. An event written by this process wakes its listeners at
once (``notify``); one written by another worker is seen at the next poll.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter

import sqlalchemy as sa

from chops.desk.log import latest_ids

log = logging.getLogger(__name__)


class EventHub:
    """Listeners wait for a conversation's newest event id to pass the one they have sent."""

    def __init__(self, engine: sa.Engine, poll_s: float = 0.2) -> None:
        self.engine, self.poll_s = engine, poll_s
        self._cond = threading.Condition()
        self._listening: Counter[str] = Counter()
        self._latest: dict[str, int] = {}
        self._poller: threading.Thread | None = None

    def notify(self, conversation_id: str, event_id: int) -> None:
        """An event of ``conversation_id`` was committed (by this process): wake its listeners."""
        with self._cond:
            if conversation_id in self._listening and event_id > self._latest.get(conversation_id, 0):
                self._latest[conversation_id] = event_id
                self._cond.notify_all()

    def wait(self, conversation_id: str, after: int, timeout: float) -> bool:
        """Block until the conversation has an event newer than ``after`` (True) or ``timeout`` passes."""
        with self._cond:
            self._listening[conversation_id] += 1
            if self._poller is None:
                self._poller = threading.Thread(target=self._poll, name="chops-event-hub", daemon=True)
                self._poller.start()
            try:
                return self._cond.wait_for(lambda: self._latest.get(conversation_id, 0) > after, timeout)
            finally:
                self._listening[conversation_id] -= 1
                if self._listening[conversation_id] <= 0:
                    del self._listening[conversation_id]
                    self._latest.pop(conversation_id, None)

    def _poll(self) -> None:
        while True:
            with self._cond:
                wanted = list(self._listening)
                if not wanted:
                    self._poller = None  # the next listener starts a new poller
                    return
            try:
                latest = latest_ids(self.engine, wanted)
            except sa.exc.DBAPIError as exc:  # a database outage: listeners time out, streams end
                log.warning("event hub: cannot read the event log: %s", exc.orig)
                latest = {}
            with self._cond:
                changed = False
                for cid, top in latest.items():
                    if cid in self._listening and top > self._latest.get(cid, 0):
                        self._latest[cid] = top
                        changed = True
                if changed:
                    self._cond.notify_all()
                self._cond.wait(self.poll_s)  # the lock is released while it sleeps
