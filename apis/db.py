"""Engines and schema creation for SQLite (the embedded default) and MySQL/MariaDB."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.pool import StaticPool

from apis.tables import metadata
from chops import tables as agent_tables

# The agent's own tables and the CPHOS tables: what ``init_schema`` creates and ``db/schema.sql`` holds.
METADATAS = (agent_tables.metadata, metadata)

SCHEMA_SQL = Path(__file__).resolve().parents[1] / "db" / "schema.sql"

# The only BEGIN variants we ever emit; looked up, never formatted from input.
_SQLITE_BEGIN = {"deferred": "BEGIN", "immediate": "BEGIN IMMEDIATE"}


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
    kwargs: dict = {"connect_args": {"timeout": 30, "check_same_thread": False}}
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
        cur.execute("PRAGMA busy_timeout=30000")
        if u.database not in (None, "", ":memory:"):
            cur.execute("PRAGMA journal_mode=WAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):  # noqa: ANN001
        mode = conn.get_execution_options().get("sqlite_begin", "deferred")
        conn.exec_driver_sql(_SQLITE_BEGIN[mode])

    return engine


def schema_statements(path: Path = SCHEMA_SQL) -> list[str]:
    """The DDL statements of ``db/schema.sql`` (comments stripped, split at ``;`` line ends)."""
    # Whole-line comments go; inline "-- " comments are valid MySQL and stay.
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if not ln.lstrip().startswith("--")]
    text = "\n".join(lines)
    return [s.strip() for s in text.split(";\n") if s.strip().rstrip(";").strip()]


def init_schema(engine: sa.Engine) -> None:
    """Create every table that does not exist yet (idempotent).

    MySQL runs ``db/schema.sql`` (the source of truth); other databases ``create_all`` of ``METADATAS``.
    ``tests/integration/test_schema.py`` proves the two agree.
    """
    if is_mysql(engine):
        with engine.begin() as conn:
            for stmt in schema_statements():
                conn.exec_driver_sql(stmt.rstrip(";"))
    else:
        for md in METADATAS:
            md.create_all(engine)
