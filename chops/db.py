"""Engines for SQLite (the embedded default) and MySQL/MariaDB: the same code on both, for the agent's
tables and any domain pack's."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.pool import StaticPool

# The only BEGIN variants we ever emit; looked up, never formatted from input.
_SQLITE_BEGIN = {"deferred": "BEGIN", "immediate": "BEGIN IMMEDIATE"}
_BUSY_S = 30  # how long a SQLite connection waits for another's lock


def is_mysql(engine: sa.Engine) -> bool:
    """True for MySQL and MariaDB engines."""
    return engine.dialect.name in ("mysql", "mariadb")


def make_engine(url: str) -> sa.Engine:
    """An engine for ``url``.

    SQLite: foreign keys on, WAL, a 30 s busy timeout, and real transactions — pysqlite's default
    only emits BEGIN before DML, so reads of a write would run outside it; we take over BEGIN
    (SQLAlchemy's documented recipe) and a write unit of work asks for ``BEGIN IMMEDIATE`` via the
    ``sqlite_begin`` execution option so concurrent writers queue instead of failing.
    MySQL/MariaDB: ``pool_pre_ping`` so idle connections dropped by the server are replaced.
    """
    u = sa.engine.make_url(url)
    if u.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True, pool_recycle=3600)
    kwargs: dict = {"connect_args": {"timeout": _BUSY_S, "check_same_thread": False}}
    if u.database in (None, "", ":memory:"):
        kwargs["poolclass"] = StaticPool  # one shared in-memory database
    else:
        Path(u.database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):  # noqa: ANN001 - DBAPI objects
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see docstring)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={_BUSY_S * 1000}")
        if u.database not in (None, "", ":memory:"):
            _wal(cur)
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):  # noqa: ANN001
        mode = conn.get_execution_options().get("sqlite_begin", "deferred")
        conn.exec_driver_sql(_SQLITE_BEGIN[mode])

    return engine


def _wal(cur: sqlite3.Cursor) -> None:
    """Switch the file to WAL (a no-op read once it is).

    The first switch of a new file takes its exclusive lock; when two connections switch it at once
    (workers starting together), SQLite sees a possible deadlock and answers "database is locked" at
    once instead of calling the busy handler. The other switch then ends within milliseconds, so the
    loser retries until the busy timeout.
    """
    deadline = time.monotonic() + _BUSY_S
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)
