"""Staff presence (``chops_staff_presence``): when each member was last active, so a user handed over
while nobody is around is told that a person will answer later (the conversation still waits).

``Presence.seen`` is called on every authenticated staff request; it writes at most once per member
per ``WRITE_EVERY_S`` in a process (a busy console page polls every few seconds), which is far finer
than the window the question "is anyone active?" is asked over.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import sqlalchemy as sa

from chops import tables as t
from chops.desk.log import now

WRITE_EVERY_S = 30.0


class Presence:
    """Who of the staff was active recently, over one engine; ``window_s`` is "recently"."""

    def __init__(self, engine: sa.Engine, window_s: float) -> None:
        self.engine, self.window_s = engine, window_s
        self._writer = engine.execution_options(sqlite_begin="immediate")
        self._written: dict[str, float] = {}
        self._guard = threading.Lock()

    def seen(self, name: str) -> None:
        """Record that ``name`` is active now (an upsert, skipped if this process wrote it lately)."""
        stamp = time.monotonic()
        with self._guard:
            if stamp - self._written.get(name, -WRITE_EVERY_S) < WRITE_EVERY_S:
                return
            self._written[name] = stamp
        p = t.staff_presence
        # Two short transactions, not one: an UPDATE that finds no row leaves a gap lock on MariaDB,
        # and two members' first requests at once would deadlock on their INSERTs into that gap.
        with self._writer.begin() as conn:
            updated = conn.execute(p.update().where(p.c.name == name).values(last_seen_at=now())).rowcount
        if not updated:
            try:
                with self._writer.begin() as conn:
                    conn.execute(p.insert().values(name=name, last_seen_at=now()))
            except sa.exc.IntegrityError:
                pass  # another worker inserted the same member at the same moment: it is recorded

    def anyone_active(self) -> bool:
        """True when some member was active within the window."""
        p = t.staff_presence
        since = now() - timedelta(seconds=self.window_s)
        with self.engine.connect() as conn:
            return conn.execute(sa.select(p.c.name).where(p.c.last_seen_at >= since).limit(1)).first() is not None
