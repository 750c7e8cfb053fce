"""The retail pack's schema: its tables' migration history (``migrations/``, version table
``retail_alembic_version``) beside the agent's, on SQLite (the embedded default) and MySQL/MariaDB.

The pack object names the same history: ``metadata = tables.metadata``, ``migrations = MIGRATIONS``
(``chops.domain.pack.DomainPack``), so ``chops db upgrade --domain retail`` runs it.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from apis.retail.tables import metadata
from chops import migrate

MIGRATIONS = Path(__file__).resolve().with_name("migrations")
HISTORY = migrate.pack_history("retail", metadata, MIGRATIONS)


def init_schema(engine: sa.Engine) -> list[migrate.Step]:
    """Bring the agent's tables and the retail tables to their newest revision: create them on an empty
    database, upgrade an older one (``chops.migrate.upgrade``, what ``chops db upgrade`` runs)."""
    return migrate.upgrade_histories(engine, (migrate.AGENT, HISTORY))
