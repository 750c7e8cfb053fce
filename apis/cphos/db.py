"""Schema creation for SQLite (the embedded default) and MySQL/MariaDB: the agent's tables and CPHOS's."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from apis.cphos.tables import metadata
from chops import tables as agent_tables
from chops.db import is_mysql

# The agent's own tables and the CPHOS tables: what ``init_schema`` creates and ``db/schema.sql`` holds.
METADATAS = (agent_tables.metadata, metadata)

SCHEMA_SQL = Path(__file__).resolve().parents[2] / "db" / "schema.sql"

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
