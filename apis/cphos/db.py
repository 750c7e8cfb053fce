"""The CPHOS pack's schema: its tables' migration history (``migrations/``, version table
``cphos_alembic_version``) beside the agent's, on SQLite (the embedded default) and MySQL/MariaDB."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from apis.cphos.tables import metadata
from chops import migrate
from chops import tables as agent_tables

# The agent's own tables and the CPHOS tables: what ``init_schema`` creates and ``db/schema.sql`` holds.
METADATAS = (agent_tables.metadata, metadata)

MIGRATIONS = Path(__file__).resolve().with_name("migrations")
HISTORY = migrate.pack_history("cphos", metadata, MIGRATIONS)  # the pack's own (CphosPack names the same)

SCHEMA_SQL = Path(__file__).resolve().parents[2] / "db" / "schema.sql"

def schema_statements(path: Path = SCHEMA_SQL) -> list[str]:
    """The DDL statements of ``db/schema.sql`` (comments stripped, split at ``;`` line ends)."""
    # Whole-line comments go; inline "-- " comments are valid MySQL and stay.
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if not ln.lstrip().startswith("--")]
    text = "\n".join(lines)
    return [s.strip() for s in text.split(";\n") if s.strip().rstrip(";").strip()]


def init_schema(engine: sa.Engine) -> list[migrate.Step]:
    """Bring the agent's tables and the CPHOS tables to their newest revision: create them on an empty
    database, upgrade an older one (``chops.migrate.upgrade``, what ``chops db upgrade`` runs)."""
    return migrate.upgrade_histories(engine, (migrate.AGENT, HISTORY))
