"""db/schema.sql, the table metadata (the agent's ``chops.tables`` and CPHOS's ``apis.cphos.tables``) and the
migrations agree: load the SQL into MariaDB, reflect, compare with the metadata; and the migrations
(``init_schema``) and ``create_all`` from the metadata on MariaDB reflect to the very same types and table
options. (tests/integration/test_migrations.py compares the migrations with the metadata on both backends.)"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from apis.cphos.db import HISTORY, METADATAS, init_schema, schema_statements
from chops.db import make_engine
from chops.migrate import AGENT
from tests.conftest import mariadb_database

TABLES = {name: table for md in METADATAS for name, table in md.tables.items()}
VERSION_TABLES = {AGENT.version_table, HISTORY.version_table}


def family(type_: sa.types.TypeEngine) -> str:
    """A coarse type family that both reflection and the metadata can be reduced to."""
    if isinstance(type_, sa.Boolean) or (isinstance(type_, sa.Integer) and getattr(type_, "display_width", 0) == 1):
        return "bool"
    if "TEXT" in type(type_).__name__.upper():  # MySQL LONGTEXT is not an sa.Text subclass
        return "text"
    for kind, name in ((sa.LargeBinary, "binary"), (sa.Integer, "int"), (sa.Float, "float"), (sa.Double, "float"), (sa.DateTime, "datetime"),
                       (sa.Text, "text"), (sa.String, "str")):
        if isinstance(type_, kind):
            return name
    return type(type_).__name__


def describe(table: sa.Table, dialect) -> dict:
    def impl(c):
        return c.type.dialect_impl(dialect) if dialect else c.type

    return {
        "columns": [(c.name, family(impl(c)), getattr(impl(c), "length", None), c.nullable) for c in table.columns],
        "pk": [c.name for c in table.primary_key.columns],
        "indexes": sorted((i.name, tuple(c.name for c in i.columns), bool(i.unique)) for i in table.indexes),
        "fks": sorted((fk.parent.name, fk.column.table.name, fk.column.name) for fk in table.foreign_keys),
    }


def reflect(engine: sa.Engine) -> sa.MetaData:
    md = sa.MetaData()
    md.reflect(engine)
    return md


@pytest.fixture
def second_mariadb():
    with mariadb_database() as url:
        yield url


def table_options(engine: sa.Engine) -> dict[str, tuple[str, str]]:
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT table_name, engine, table_collation FROM information_schema.tables "
                                    "WHERE table_schema = DATABASE()")).all()
    return {r[0]: (r[1], r[2]) for r in rows}


def load_schema_sql(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        for stmt in schema_statements():
            conn.exec_driver_sql(stmt.rstrip(";"))


@pytest.mark.mariadb
def test_schema_sql_matches_metadata(mariadb_url):
    engine = make_engine(mariadb_url)
    load_schema_sql(engine)
    reflected = reflect(engine)
    assert set(reflected.tables) == set(TABLES)
    for name, table in TABLES.items():
        assert describe(reflected.tables[name], None) == describe(table, engine.dialect), name
    # utf8mb4 + InnoDB everywhere
    assert set(table_options(engine).values()) == {("InnoDB", "utf8mb4_unicode_ci")}
    engine.dispose()


@pytest.mark.mariadb
def test_migrations_and_create_all_reflect_like_schema_sql(mariadb_url, second_mariadb):
    """The three ways to write the schema agree on MariaDB: db/schema.sql, the migrations (what ``init_schema``
    runs) and ``create_all``: columns with their MySQL types, keys, indexes and, for the migrations, the
    table options."""
    from_sql, from_migrations = make_engine(mariadb_url), make_engine(second_mariadb)
    load_schema_sql(from_sql)
    init_schema(from_migrations)
    with mariadb_database() as third:
        from_meta = make_engine(third)
        for md in METADATAS:
            md.create_all(from_meta)
        expected, got, meta = reflect(from_sql), reflect(from_migrations), reflect(from_meta)
        from_meta.dispose()
    assert set(got.tables) == set(TABLES) | VERSION_TABLES
    for name in TABLES:
        cols = [[(c.name, str(c.type), c.nullable, c.autoincrement, str(c.server_default.arg) if c.server_default
                  else None) for c in md.tables[name].columns] for md in (expected, got, meta)]
        assert cols[0] == cols[1] == cols[2], name
        assert describe(expected.tables[name], None) == describe(got.tables[name], None) \
            == describe(meta.tables[name], None), name
    options = table_options(from_migrations)
    assert {options[name] for name in TABLES} == {("InnoDB", "utf8mb4_unicode_ci")}
    from_sql.dispose()
    from_migrations.dispose()


def test_init_schema_is_idempotent(db_url):
    engine = make_engine(db_url)
    init_schema(engine)
    init_schema(engine)
    assert set(sa.inspect(engine).get_table_names()) == set(TABLES) | VERSION_TABLES
    engine.dispose()


def test_schema_sql_has_every_table():
    created = {s.split("IF NOT EXISTS", 1)[1].split("(", 1)[0].strip() for s in schema_statements()}
    assert created == set(TABLES)
