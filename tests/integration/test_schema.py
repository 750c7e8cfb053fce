"""db/schema.sql and the table metadata (the agent's ``chops.tables`` and CPHOS's ``apis.cphos.tables``) agree:
load the SQL into MariaDB, reflect, compare with the metadata; and ``create_all`` from the metadata on
MariaDB reflects to the very same types."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from apis.cphos.db import METADATAS, init_schema, schema_statements
from chops.db import make_engine
from tests.conftest import mariadb_database

TABLES = {name: table for md in METADATAS for name, table in md.tables.items()}


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


@pytest.mark.mariadb
def test_schema_sql_matches_metadata(mariadb_url):
    engine = make_engine(mariadb_url)
    with engine.begin() as conn:
        for stmt in schema_statements():
            conn.exec_driver_sql(stmt.rstrip(";"))
    reflected = reflect(engine)
    assert set(reflected.tables) == set(TABLES)
    for name, table in TABLES.items():
        assert describe(reflected.tables[name], None) == describe(table, engine.dialect), name
    with engine.connect() as conn:  # utf8mb4 + InnoDB everywhere
        rows = conn.execute(sa.text("SELECT table_name, engine, table_collation FROM information_schema.tables "
                                    "WHERE table_schema = DATABASE()")).all()
    assert {(r[1], r[2].split("_")[0]) for r in rows} == {("InnoDB", "utf8mb4")}
    engine.dispose()


@pytest.mark.mariadb
def test_create_all_reflects_like_schema_sql(mariadb_url, second_mariadb):
    from_sql, from_meta = make_engine(mariadb_url), make_engine(second_mariadb)
    init_schema(from_sql)  # MySQL path: runs schema.sql
    for md in METADATAS:
        md.create_all(from_meta)
    a, b = reflect(from_sql), reflect(from_meta)
    for name in TABLES:
        cols_a = [(c.name, str(c.type), c.nullable, c.autoincrement) for c in a.tables[name].columns]
        cols_b = [(c.name, str(c.type), c.nullable, c.autoincrement) for c in b.tables[name].columns]
        assert cols_a == cols_b, name
        assert describe(a.tables[name], None) == describe(b.tables[name], None), name
    from_sql.dispose()
    from_meta.dispose()


def test_init_schema_is_idempotent(db_url):
    engine = make_engine(db_url)
    init_schema(engine)
    init_schema(engine)
    assert set(sa.inspect(engine).get_table_names()) == set(TABLES)
    engine.dispose()


def test_schema_sql_has_every_table():
    created = {s.split("IF NOT EXISTS", 1)[1].split("(", 1)[0].strip() for s in schema_statements()}
    assert created == set(TABLES)
