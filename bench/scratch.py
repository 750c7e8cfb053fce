"""A scratch MariaDB database for a benchmark: created empty (utf8mb4), dropped afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from chops.db import make_engine


@contextmanager
def scratch_mariadb(server_url: str) -> Iterator[sa.Engine]:
    """An engine on a new database of the server at ``server_url``; the database is dropped on exit."""
    name = f"chops_bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(server_url)
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"))
    engine = make_engine(f"{server_url}/{name}?charset=utf8mb4")
    try:
        yield engine
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS `{name}`"))
        admin.dispose()
