"""Database state for tests and grading: snapshots, their row-level diff, table checksums, and the
CPHOS ``expected_effect`` notation (``t[id=N].f=v; t+{f=v,...}``) parsed into ``Change`` objects."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Iterable

import sqlalchemy as sa

from apis import tables as t
from apis.outcomes import Change

Snapshot = dict[str, dict[tuple, dict[str, Any]]]


def snapshot(engine: sa.Engine, tables: Iterable[sa.Table] = t.CPHOS_TABLES) -> Snapshot:
    """Every row of ``tables`` keyed by primary key."""
    out: Snapshot = {}
    with engine.connect() as conn:
        for table in tables:
            pk = [c.name for c in table.primary_key.columns]
            out[table.name] = {tuple(r[k] for k in pk): dict(r) for r in conn.execute(sa.select(table)).mappings()}
    return out


def diff_snapshots(before: Snapshot, after: Snapshot) -> list[Change]:
    """Row-level changes from ``before`` to ``after``: updates per field, inserts (``after`` = row) and
    deletes (``before`` = row, ``after`` = None) with ``field=None``."""
    changes: list[Change] = []
    for name, rows in after.items():
        pk = [c.name for c in t.metadata.tables[name].primary_key.columns]
        old_rows = before.get(name, {})
        for key, row in rows.items():
            keyd = dict(zip(pk, key))
            old = old_rows.get(key)
            if old is None:
                changes.append(Change(table=name, key=keyd, after=row))
                continue
            changes += [Change(table=name, key=keyd, field=f, before=old[f], after=v) for f, v in row.items() if old[f] != v]
        changes += [Change(table=name, key=dict(zip(pk, k)), before=r) for k, r in old_rows.items() if k not in rows]
    return changes


def checksums(engine: sa.Engine, tables: Iterable[sa.Table] | None = None) -> dict[str, str]:
    """A sha256 of every table's rows (ordered by primary key): equal dicts = unchanged database."""
    out = {}
    with engine.connect() as conn:
        for table in tables or t.metadata.sorted_tables:
            rows = conn.execute(sa.select(table).order_by(*table.primary_key.columns)).all()
            out[table.name] = hashlib.sha256(json.dumps([list(r) for r in rows], default=str).encode()).hexdigest()
    return out


def _coerce(table: str, field: str, value: str) -> Any:
    col = t.metadata.tables[table].c[field]
    if value.lower() in ("null", "none"):
        return None
    try:
        kind = col.type.python_type
    except NotImplementedError:  # pragma: no cover - every column type here has one
        return value
    return kind(value) if kind in (int, float) else value


_UPDATE = re.compile(r"^(\w+)\[(\w+)=([^\]]+)\]\.(\w+)=(.*)$")
_INSERT = re.compile(r"^(\w+)\+\{(.*)\}$")


def parse_effect(text: str) -> list[Change]:
    """Parse an ``expected_effect`` cell; values get the MySQL column's type (``none`` = no change)."""
    text = (text or "").strip()
    if text.lower() in ("", "none"):
        return []
    changes = []
    for part in (p.strip() for p in text.split(";") if p.strip()):
        if m := _UPDATE.match(part):
            table, kf, kv, field, value = m.groups()
            changes.append(Change(table=table, key={kf: _coerce(table, kf, kv)}, field=field,
                                  after=_coerce(table, field, value)))
        elif m := _INSERT.match(part):
            table = m.group(1)
            row = dict(kv.split("=", 1) for kv in m.group(2).split(","))
            row = {k.strip(): _coerce(table, k.strip(), v.strip()) for k, v in row.items()}
            pk = [c.name for c in t.metadata.tables[table].primary_key.columns]
            changes.append(Change(table=table, key={k: row.get(k) for k in pk}, after=row))
        else:
            raise ValueError(f"cannot parse effect {part!r}")
    return changes


def effect_set(changes: Iterable[Change]) -> set[tuple]:
    """Changes reduced to comparable facts (what a grader compares: the end state, not ``before``)."""
    out = set()
    for c in changes:
        key = tuple(sorted(c.key.items()))
        if c.field is None:
            row = c.after if c.after is not None else c.before
            out.add((c.table, "insert" if c.after is not None else "delete", tuple(sorted(row.items()))))
        else:
            out.add((c.table, key, c.field, c.after))
    return out
