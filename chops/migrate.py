"""Schema migrations (Alembic), and ``upgrade``: the one way any database gets its tables.

One history per ``MetaData``, each with a version table of its own so that they never interfere: the
agent's tables (``chops/migrations``, ``chops_alembic_version``) and each domain pack's (the pack's
``migrations`` directory, ``<pack>_alembic_version``). A history's directory holds only its revisions
(``versions/``): the Alembic environment (``env.py``, which calls ``run_env``, and the ``script.py.mako`` new
revisions are written from) is one for all, ``ENVIRONMENT``. Alembic runs in process on the caller's engine:
no ``alembic.ini``, no environment variables.

The first revision of every history is its *baseline*: the schema as it was when migrations came. It
creates only the tables that are missing, so on a database made before (tables present, no version
table) it creates nothing and is merely recorded — the baseline is stamped — and later revisions run.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.operations import ops
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from chops import tables

# Every table is InnoDB, utf8mb4 on MySQL (as db/schema.sql), whatever the database's defaults are:
# autogenerate writes these options into every new table's migration.
MYSQL_TABLE_OPTIONS = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_unicode_ci"}

# Revision files sort by date in their directory.
FILE_TEMPLATE = "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s"

LOCK_NAME = "chops_schema_upgrade"  # MySQL: concurrent upgraders (several workers starting) queue on it
LOCK_TIMEOUT_S = 300


@dataclass(frozen=True, eq=False)
class History:
    """One migration history: the tables of one ``MetaData`` and the directory of their migrations."""

    name: str  # "chops" (the agent's), else the pack's name
    metadata: sa.MetaData
    directory: Path | None  # its versions/ folder's parent; None: the tables are only ever created

    @property
    def version_table(self) -> str:
        """The table that records this history's revision (``<name>_alembic_version``)."""
        return f"{self.name}_alembic_version"


# The Alembic environment every history runs in (env.py, script.py.mako): the same for the agent's and each pack's,
# so a pack ships only its revisions (migrations/versions/).
ENVIRONMENT = Path(__file__).resolve().with_name("migrations")
AGENT = History("chops", tables.metadata, ENVIRONMENT)


def histories(pack) -> tuple[History, History]:
    """The agent's history and the pack's (``pack.metadata``, ``pack.migrations``; ``migrations`` may be
    absent or None: the pack's tables are then created when missing and never altered)."""
    return AGENT, pack_history(pack.name, pack.metadata, getattr(pack, "migrations", None))


@functools.cache
def pack_history(name: str, metadata: sa.MetaData, directory: Path | None) -> History:
    """The history of a pack's tables (one object per pack, so its scripts are read once)."""
    return History(name, metadata, Path(directory) if directory else None)


def alembic_config(history: History, connection: sa.Connection | None = None) -> Config:
    """An Alembic ``Config`` for ``history`` on ``connection`` (``env.py`` reads both from its attributes)."""
    if history.directory is None:
        raise ValueError(f"{history.name} has no migrations")
    cfg = Config()
    cfg.set_main_option("script_location", str(ENVIRONMENT))
    # The history's own revisions, wherever its pack lives; a new revision is written there too.
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("version_locations", str(history.directory / "versions"))
    cfg.set_main_option("file_template", FILE_TEMPLATE)
    cfg.attributes["history"] = history
    cfg.attributes["connection"] = connection
    return cfg


@functools.cache
def scripts(history: History) -> ScriptDirectory:
    """The history's revision scripts (read once per process: they do not change while it runs)."""
    return ScriptDirectory.from_config(alembic_config(history))


def heads(history: History) -> set[str]:
    """The newest revision(s) of ``history``."""
    return set(scripts(history).get_heads())


def current(connection: sa.Connection, history: History) -> set[str]:
    """The revision(s) the database is at for ``history`` (empty: never migrated)."""
    ctx = MigrationContext.configure(connection, opts={"version_table": history.version_table})
    return set(ctx.get_current_heads())


def context_options(history: History) -> dict:
    """What every Alembic run of ``history`` is configured with (``env.py`` and the drift test)."""

    def include_name(name, type_, parent_names):  # noqa: ANN001 - Alembic's hook signature
        # Only this history's tables: the others (another history's, version tables) are none of its
        # business. So autogenerate never proposes dropping a table: a drop is written by hand.
        return type_ != "table" or name in history.metadata.tables

    return {"target_metadata": history.metadata, "version_table": history.version_table,
            "include_name": include_name, "render_as_batch": True,  # SQLite alters by copying the table
            "compare_type": True, "compare_server_default": _compare_default, "transaction_per_migration": True,
            "process_revision_directives": _tidy_revision}


def _compare_default(context, inspected_column, metadata_column, inspected_default, metadata_default,  # noqa: ANN001
                     rendered_metadata_default) -> bool | None:
    """Alembic's own comparison (None), less two false alarms it raises: an empty string default ('' read
    back as "''"), and MySQL's 0 / 1 for a boolean's false / true."""
    got, want = _plain(inspected_default), _plain(rendered_metadata_default)
    return False if got is not None and got == want else None


def _plain(default: str | None) -> str | None:
    if default is None:
        return None
    text = re.sub(r"^'(.*)'$", r"\1", re.sub(r"^\((.*)\)$", r"\1", default.strip()))
    return {"false": "0", "true": "1"}.get(text.lower(), text)


def _tidy_revision(context, revision, directives) -> None:  # noqa: ANN001 - Alembic's hook signature
    """Autogenerate: no empty revision (nothing differs), and every new table with the MySQL options."""
    script = directives[0]
    if script.upgrade_ops.is_empty():
        if not context.config.attributes.get("allow_empty"):  # `chops db revision --empty`: a data migration
            directives[:] = []
        return
    for op in script.upgrade_ops.ops:
        if isinstance(op, ops.CreateTableOp):
            for key, value in MYSQL_TABLE_OPTIONS.items():
                op.kw.setdefault(key, value)


def run_env() -> None:
    """The body of the shared ``env.py``: run what Alembic asks on the connection it was given, for the history
    it was given."""
    from alembic import context

    history: History = context.config.attributes["history"]
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("run migrations through `chops db upgrade` / `chops db revision` "
                           "(chops.migrate), which pass the connection")
    context.configure(connection=connection, **context_options(history))
    with context.begin_transaction():
        context.run_migrations()


@dataclass(frozen=True)
class Step:
    """What ``upgrade`` did to one history."""

    history: str
    action: str  # "created" (empty database), "upgraded", "current" (nothing to do), "checked" (no migrations)
    before: tuple[str, ...]
    after: tuple[str, ...]


def upgrade(engine: sa.Engine, pack) -> list[Step]:
    """Bring the agent's tables and ``pack``'s to their newest revision (``upgrade_histories``)."""
    return upgrade_histories(engine, histories(pack))


def upgrade_histories(engine: sa.Engine, wanted: Sequence[History]) -> list[Step]:
    """Bring every history in ``wanted`` to its newest revision; never drops or rewrites rows.

    Per history: at head already, nothing; never migrated and none of its tables present, created at
    head; else the migrations run from where the database is (a database made before migrations
    existed starts at the baseline, which adopts its tables). Concurrent callers queue: SQLite takes
    the write lock for the whole upgrade (atomic: DDL is transactional there), MySQL a named lock.
    """
    with _locked(engine) as conn:
        return [_upgrade(conn, h) for h in wanted]


def _upgrade(conn: sa.Connection, history: History) -> Step:
    if history.directory is None:
        history.metadata.create_all(conn)  # checkfirst: creates only missing tables
        return Step(history.name, "checked", (), ())
    before, target = current(conn, history), heads(history)
    if conn.dialect.name != "sqlite":
        # End the read's transaction: Alembic then commits each revision with its version row (MySQL's
        # DDL commits itself anyway). SQLite runs the whole upgrade in the one transaction of _locked.
        conn.commit()
    if before == target:
        return Step(history.name, "current", tuple(sorted(before)), tuple(sorted(before)))
    if not before and conn.dialect.name == "sqlite" and not _any_table(conn, history):
        # A brand-new SQLite database (the test suite makes hundreds): create_all + stamp head takes
        # what create_all alone did (agent + CPHOS: ~20 ms on a file, ~16 ms in memory), replaying the
        # migrations 2.5-3x that (~50 ms, ~46 ms); the drift test proves both give the same tables.
        # MySQL always replays them: they carry the table options (InnoDB, utf8mb4), and one statement
        # per table and per index costs the same either way there (~350 ms, create_all as much).
        history.metadata.create_all(conn, checkfirst=False)  # none is there (we hold the lock)
        MigrationContext.configure(conn, opts={"version_table": history.version_table}).stamp(
            scripts(history), "heads")
        return Step(history.name, "created", (), tuple(sorted(target)))
    if conn.dialect.name == "sqlite":  # what was broken before is not the migrations' doing
        conn.info.setdefault(_FK_BEFORE, _broken_references(conn))
    command.upgrade(alembic_config(history, conn), "heads")
    return Step(history.name, "upgraded", tuple(sorted(before)), tuple(sorted(current(conn, history))))


def _any_table(conn: sa.Connection, history: History) -> bool:
    present = set(sa.inspect(conn).get_table_names())
    return bool(present & set(history.metadata.tables))


@contextmanager
def _locked(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A connection that alone upgrades the schema until the block ends."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            yield from _sqlite_locked(conn)
        elif engine.dialect.name in ("mysql", "mariadb"):
            got = conn.execute(sa.text("SELECT GET_LOCK(:n, :t)"), {"n": LOCK_NAME, "t": LOCK_TIMEOUT_S}).scalar()
            conn.commit()  # Alembic must not find a transaction of ours open: it commits per migration
            if got != 1:
                raise TimeoutError(f"another process has been upgrading the schema for {LOCK_TIMEOUT_S} s")
            try:
                yield conn
                conn.commit()
            finally:
                conn.rollback()
                conn.execute(sa.text("SELECT RELEASE_LOCK(:n)"), {"n": LOCK_NAME})
                conn.commit()
        else:
            with conn.begin():
                yield conn


_FK_BEFORE = "chops_migrate_fk_before"  # conn.info: the broken references found before the first revision ran


def _sqlite_locked(conn: sa.Connection) -> Iterator[sa.Connection]:
    # Foreign keys off while migrating: a batch migration copies a table, drops the old one and renames
    # the copy, which a referenced table does not survive with them on. The pragma is a no-op inside a
    # transaction, so it goes to the driver before BEGIN. When revisions ran, foreign_key_check (a scan,
    # so not on every start) proves they broke no reference; the whole upgrade rolls back if they did.
    raw = conn.connection.dbapi_connection
    raw.execute("PRAGMA foreign_keys=OFF")
    try:
        with conn.execution_options(sqlite_begin="immediate").begin():  # writers queue behind us
            yield conn
            if _FK_BEFORE in conn.info:
                broken = _broken_references(conn) - conn.info[_FK_BEFORE]
                if broken:
                    raise RuntimeError(f"the migration broke foreign keys (table, rowid, parent, key): "
                                       f"{sorted(broken)[:5]}")
    finally:
        conn.info.pop(_FK_BEFORE, None)
        raw.execute("PRAGMA foreign_keys=ON")


def _broken_references(conn: sa.Connection) -> set[tuple]:
    return set(map(tuple, conn.exec_driver_sql("PRAGMA foreign_key_check").all()))


def revision(history: History, message: str, *, empty: bool = False, engine: sa.Engine | None = None) -> Path | None:
    """Write a new revision of ``history``: autogenerated from what its metadata has and its migrations
    do not (None when nothing differs), or ``empty`` for a hand-written data migration.

    Compared on ``engine`` when given (it must be at head: Alembic refuses otherwise), else on a scratch
    in-memory SQLite database the migrations are replayed into (never ``create_all``: that would hide
    the very difference sought). Read the file it writes before committing it.
    """
    from chops.db import make_engine

    scratch = engine is None
    engine = engine if engine is not None else make_engine("sqlite://")
    try:
        with engine.connect() as conn:
            cfg = alembic_config(history, conn)
            cfg.attributes["allow_empty"] = empty
            if scratch:
                command.upgrade(cfg, "heads")
            script = command.revision(cfg, message=message, autogenerate=not empty)
            conn.commit()
    finally:
        if scratch:
            engine.dispose()
    scripts.cache_clear()  # a new head
    return Path(script.path) if script else None
