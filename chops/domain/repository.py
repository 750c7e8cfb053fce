"""The base of every pack's SQL repositories: one Core connection of the unit of work (bound parameters only), reads
that lock in a write unit of work, and writes that record their row-level ``Change``s for the diff.

Reads in a write unit of work lock the rows they return when asked (MySQL ``SELECT ... FOR UPDATE``; SQLite's
``BEGIN IMMEDIATE`` already holds the database). An update records one ``Change`` per changed field, an insert one
per row, a delete one per row; money in them is a float to the cent.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from chops.domain.document import name_key
from chops.domain.outcomes import Change

Row = dict[str, Any]
CHUNK = 400  # values per IN list: under SQLite's old 999-parameter limit


def shown(value: Any) -> Any:
    """A value as a ``Change`` shows it: amounts as floats (JSON numbers), the rest as they are."""
    return float(value) if isinstance(value, Decimal) else value


class SqlRepository:
    """Rows of a pack's tables on the unit of work's connection; ``changes`` is the unit of work's diff."""

    def __init__(self, conn: sa.Connection, changes: list[Change], lock: bool):
        self.conn, self.changes, self.lock = conn, changes, lock

    def _rows(self, stmt: sa.Select, *, lock: bool = False) -> list[Row]:
        if lock and self.lock:
            stmt = stmt.with_for_update()
        return [dict(r._mapping) for r in self.conn.execute(stmt)]

    def _one(self, stmt: sa.Select, *, lock: bool = False) -> Row | None:
        rows = self._rows(stmt, lock=lock)
        return rows[0] if rows else None

    def _in_chunks(self, query: Callable[[list[str]], sa.Select], values: Collection[str], key: str) -> list[Row]:
        """The rows ``query(chunk)`` returns for each chunk of ``values`` (an indexed ``IN`` a chunk, never a scan),
        one per distinct ``key``, in the order of ``key``."""
        values = sorted(set(values))
        found: dict[Any, Row] = {}
        for i in range(0, len(values), CHUNK):
            found.update((r[key], r) for r in self._rows(query(values[i:i + CHUNK])))
        return [found[k] for k in sorted(found)]

    def _update(self, table: sa.Table, key: Row, row: Row, values: Row) -> None:
        """Set ``values`` on the row ``key`` (``row``: its current values, updated in place); only the fields
        that differ are written and recorded."""
        changed = {k: v for k, v in values.items() if row[k] != v}
        if not changed:
            return
        where = [table.c[k] == v for k, v in key.items()]
        self.conn.execute(table.update().where(*where).values(changed))
        self.changes += [Change(table=table.name, key=key, field=k, before=shown(row[k]), after=shown(v))
                         for k, v in changed.items()]
        row.update(changed)

    def _insert(self, table: sa.Table, key_fields: tuple[str, ...], values: Row) -> None:
        self.conn.execute(table.insert().values(values))
        self.changes.append(Change(table=table.name, key={k: values[k] for k in key_fields},
                                   after={k: shown(v) for k, v in values.items()}))

    def _delete(self, table: sa.Table, key: Row, row: Row) -> None:
        """Delete the row ``key``: recorded as one change of the whole row to nothing."""
        self.conn.execute(table.delete().where(*(table.c[k] == v for k, v in key.items())))
        self.changes.append(Change(table=table.name, key=key, before={k: shown(v) for k, v in row.items()}))


def named_query(table: sa.Table, keys: Collection[str]) -> sa.Select:
    """The people of an accounts table (``chops.domain.columns.account``) whose ``name_key`` is one of ``keys``: an
    ``IN`` on the indexed column."""
    return sa.select(table.c.user_id, table.c.first_name, table.c.last_name).where(table.c.name_key.in_(list(keys)))


class AccountRepository(SqlRepository):
    """The people of a pack (customers, travellers): a subclass names their ``table``."""

    table: sa.Table

    def get(self, user_id: str) -> Row | None:
        """The person ``user_id`` (locked in a write unit of work: one person's writes run one at a time)."""
        return self._one(sa.select(self.table).where(self.table.c.user_id == user_id), lock=True)

    def named(self, keys: Collection[str]) -> list[Row]:
        """``user_id``, ``first_name``, ``last_name`` of the people whose ``name_key`` is one of ``keys`` (lower-cased
        "first last"): indexed ``IN`` look-ups in chunks, never a scan."""
        return self._in_chunks(lambda chunk: named_query(self.table, chunk), keys, "user_id")


def name_keys(names: Collection[str]) -> set[str]:
    """The ``name_key`` of each full name in ``names`` (``SystemApi.people_named``); a string without a space names
    no one."""
    return {name_key(*n.split(maxsplit=1)) for n in names if isinstance(n, str) and len(n.split()) > 1}


def people(rows: list[Row], keys: set[str]) -> list[tuple[str, tuple[str, ...]]]:
    """``(user_id, ("First Last",))`` of the ``AccountRepository.named`` rows whose name is one of ``keys`` exactly
    (MariaDB's collation may match more)."""
    return [(r["user_id"], (f"{r['first_name']} {r['last_name']}",)) for r in rows
            if name_key(r["first_name"], r["last_name"]) in keys]
