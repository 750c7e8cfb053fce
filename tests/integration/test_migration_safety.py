"""Revisions after the baseline, on a copy of the agent's history: a table other tables reference is
rebuilt (SQLite's batch mode copies it) without losing a row or a reference, on SQLite and MariaDB; and on
SQLite a revision that would break references rolls the whole upgrade back."""

from __future__ import annotations

import shutil
import textwrap

import pytest
import sqlalchemy as sa

from chops.db import make_engine
from chops.migrate import AGENT, History, current, heads, scripts, upgrade_histories
from tests.integration.test_migrations import legacy_database, snapshot

HEAD = next(iter(heads(AGENT)))  # the hand-written revisions below follow it
REVISION = '''
"""{doc}"""

from alembic import op
import sqlalchemy as sa

revision = "{rev}"
down_revision = "{down}"
branch_labels = None
depends_on = None


def upgrade() -> None:
{body}


def downgrade() -> None:
    pass
'''


def history_with(tmp_path, *revisions: tuple[str, str]) -> History:
    """A copy of the agent's history with hand-written revisions (id, upgrade body) after its head."""
    directory = tmp_path / "migrations"
    shutil.copytree(AGENT.directory, directory, ignore=shutil.ignore_patterns("__pycache__"))
    down = HEAD
    for rev, body in revisions:
        text = REVISION.format(doc=rev, rev=rev, down=down, body=textwrap.indent(textwrap.dedent(body), "    "))
        (directory / "versions" / f"{rev}.py").write_text(text)
        down = rev
    return History("chops", AGENT.metadata, directory)


WIDEN_CHANNEL = """
with op.batch_alter_table("chops_conversation") as batch:  # SQLite: copy and move; MySQL: ALTER
    batch.alter_column("channel", type_=sa.String(32), existing_nullable=False,
                       existing_server_default="widget")
"""


def test_a_referenced_table_is_rebuilt_with_every_row(db_url, tmp_path):
    backend = "sqlite" if db_url.startswith("sqlite") else "mariadb"
    legacy_database(db_url, backend)
    before = snapshot(db_url)
    history = history_with(tmp_path, ("widen_channel", WIDEN_CHANNEL))
    engine = make_engine(db_url)
    upgrade_histories(engine, [history])
    with engine.connect() as conn:
        assert current(conn, history) == {"widen_channel"}
        columns = {c["name"]: c for c in sa.inspect(conn).get_columns("chops_conversation")}
        assert columns["channel"]["type"].length == 32
        if backend == "sqlite":
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1  # back on for the pool
    engine.dispose()
    after = snapshot(db_url)  # revisions since the baseline may have added tables
    assert {table: after[table] for table in before} == before
    scripts.cache_clear()


def test_a_revision_that_breaks_references_rolls_everything_back(sqlite_url, tmp_path):
    legacy_database(sqlite_url, "sqlite")
    before = snapshot(sqlite_url)
    history = history_with(tmp_path, ("widen_channel", WIDEN_CHANNEL),
                           ("orphans", 'op.execute("DELETE FROM chops_conversation")'))
    engine = make_engine(sqlite_url)
    with pytest.raises(RuntimeError, match="broke foreign keys"):
        upgrade_histories(engine, [history])
    with engine.connect() as conn:
        assert current(conn, history) == set()  # not even the baseline's stamp stayed
    engine.dispose()
    assert snapshot(sqlite_url) == before
    scripts.cache_clear()


def test_a_pack_without_migrations_gets_its_missing_tables_only(sqlite_url):
    """``migrations = None``: the tables are created when missing, never altered, and no version is kept."""
    metadata = sa.MetaData()
    sa.Table("lib_book", metadata, sa.Column("id", sa.Integer, primary_key=True), sa.Column("title", sa.Text))
    engine = make_engine(sqlite_url)
    steps = upgrade_histories(engine, [AGENT, History("lib", metadata, None)])
    assert [(s.history, s.action) for s in steps] == [("chops", "created"), ("lib", "checked")]
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO lib_book (title) VALUES ('Dune')")
    assert [s.action for s in upgrade_histories(engine, [AGENT, History("lib", metadata, None)])] == \
        ["current", "checked"]
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT title FROM lib_book").all() == [("Dune",)]
        assert not sa.inspect(conn).has_table("lib_alembic_version")
    engine.dispose()
