"""Every migration history, replayed into an empty database, gives exactly its tables' metadata (SQLite and
MariaDB): a table, column or index added without a migration fails here, saying which command writes it.
Also: one head per history, the scripts ship as package data, and `chops db revision` writes what differs."""

from __future__ import annotations

import shutil
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from click.testing import CliRunner

from apis.cphos.pack import pack as cphos
from chops.cli import main
from chops.db import make_engine
from chops.domain.pack import available_packs, load_pack
from chops.migrate import AGENT, History, alembic_config, context_options, current, heads, histories, revision, \
    scripts

ROOT = Path(__file__).resolve().parents[2]
# The agent's history and every installed pack's.
HISTORIES = {AGENT.name: AGENT} | {h.name: h for name in available_packs() for h in histories(load_pack(name))[1:]
                                   if h.directory is not None}
assert {"cphos", "retail"} <= set(HISTORIES)


def replay(conn: sa.Connection, history: History) -> None:
    """The migrations themselves, never the create_all fast path (which is the metadata by construction)."""
    command.upgrade(alembic_config(history, conn), "heads")
    conn.commit()


def drift(conn: sa.Connection, history: History) -> list[str]:
    """What the metadata has that the database has not, or the other way round: "add_table chops_x", ..."""
    ctx = MigrationContext.configure(conn, opts=context_options(history))
    return [describe(d) for d in compare_metadata(ctx, history.metadata)]


def describe(diff) -> str:  # noqa: ANN001 - Alembic's diff tuples (a column's changes come as a list of them)
    if isinstance(diff, list):
        return "; ".join(f"{d[0]} {d[2]}.{d[3]}" for d in diff)
    kind = diff[0]
    if kind.endswith("_column"):  # (kind, schema, table name, column)
        return f"{kind} {diff[2]}.{diff[3].name}"
    obj = diff[1]  # a table, an index, a constraint
    table = getattr(getattr(obj, "table", None), "name", None)
    return f"{kind} {table + '.' if table else ''}{getattr(obj, 'name', obj)}"


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_the_migrations_give_exactly_the_metadata(db_url, name):
    history = HISTORIES[name]
    engine = make_engine(db_url)
    with engine.connect() as conn:
        replay(conn, history)
        assert current(conn, history) == heads(history)
        differences = drift(conn, history)
        # compare_metadata looks at the metadata's tables only (autogenerate never proposes a drop)
        created = set(sa.inspect(conn).get_table_names()) - {history.version_table}
        differences += [f"remove_table {name}" for name in sorted(created - set(history.metadata.tables))]
    engine.dispose()
    assert differences == [], (
        f"the {name} tables' metadata and their migrations differ on {engine.dialect.name}: {differences}. "
        f"Write the migration: `chops db revision {name} -m \"what changed\"` (README, Schema changes)")


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_one_baseline_and_one_head_per_history(name):
    """Two revisions written on two branches, both on the same parent, make two heads: merge them
    (`alembic merge` semantics: a revision whose down_revision names both) before release."""
    script = scripts(HISTORIES[name])
    assert len(script.get_bases()) == 1
    assert len(script.get_heads()) == 1, f"{name} has several heads {script.get_heads()}: merge them"


def test_every_migration_script_ships_as_package_data():
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for history in HISTORIES.values():
        files = [p for p in history.directory.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        assert any(p.parent.name == "versions" for p in files)
        for path in files:
            rel = path.relative_to(ROOT)
            shipped = any(fnmatch(str(rel), str(Path(*pkg.split("."), pattern)))
                          for pkg, patterns in package_data.items() for pattern in patterns)
            assert shipped, f"{rel} is not package data in pyproject.toml"


def test_revision_writes_what_the_metadata_adds(tmp_path):
    """`chops db revision` on a copy of the agent's history whose metadata gained a column and a table:
    the revision adds them (the table with the MySQL options), applies, and then nothing differs."""
    shutil.copytree(AGENT.directory, tmp_path / "migrations", ignore=shutil.ignore_patterns("__pycache__"))
    metadata = sa.MetaData()
    for table in AGENT.metadata.tables.values():
        table.to_metadata(metadata)
    metadata.tables["chops_conversation"].append_column(sa.Column("locale", sa.String(16), nullable=True))
    sa.Table("chops_note", metadata, sa.Column("id", sa.Integer, primary_key=True), sa.Column("text", sa.Text))
    history = History("chops", metadata, tmp_path / "migrations")
    path = revision(history, "locale and notes")
    text = path.read_text()
    assert "op.create_table('chops_note'" in text and "mysql_engine='InnoDB'" in text
    assert "batch_op.add_column(sa.Column('locale'" in text
    assert revision(history, "again") is None  # nothing differs any more
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.connect() as conn:
        replay(conn, history)
        assert drift(conn, history) == []
        assert len(current(conn, history)) == 1 and current(conn, history) != heads(AGENT)
    engine.dispose()


def test_revision_cli_says_when_nothing_differs(tmp_path, monkeypatch):
    # On a copy: were the history to differ after all, the file would land there, not in the sources.
    shutil.copytree(cphos.migrations, tmp_path / "migrations", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cphos, "migrations", tmp_path / "migrations")
    result = CliRunner().invoke(main, ["db", "revision", "cphos", "-m", "nothing"])
    assert result.exit_code == 1 and "the cphos tables and their migrations agree" in result.output
    result = CliRunner().invoke(main, ["db", "revision", "bakery", "-m", "x"])
    assert result.exit_code == 1 and "no domain pack 'bakery'" in result.output
