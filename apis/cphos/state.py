"""Database state for tests and grading: snapshots of tables, their row-level diff, table checksums,
the CPHOS ``expected_effect`` notation (``t[id=N].f=v; t+{f=v,...}``) parsed into ``Change`` objects,
and a typed comparison of changes.

Values are compared after coercion to the column's Python type (from ``apis.cphos.tables``, which mirrors
the MySQL DDL), so the JSON dump's ``school_id: "3"`` and the annotation's ``3`` agree.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from functools import lru_cache
from typing import Any

import sqlalchemy as sa

from apis.cphos import tables as t
from chops.domain.outcomes import Change

NULLS = {"null", "none"}

Snapshot = dict[str, dict[tuple, tuple]]  # table -> primary key -> row values in column order
Fact = tuple  # a change reduced to typed, comparable values (see ``fact``)


class EffectSyntaxError(ValueError):
    """An ``expected_effect`` string that does not follow the README's grammar (code ``eval_effect``)."""

    code = "eval_effect"


# --- snapshots and their diff ------------------------------------------------------------------

def snapshot(engine: sa.Engine, tables: Iterable[sa.Table] = t.CPHOS_TABLES) -> Snapshot:
    """Every row of ``tables`` as plain tuples, keyed by primary key (whole row when there is none).

    Plain driver SQL and tuples: ~13k CPHOS rows read in ~0.05 s (SQLAlchemy row mappings took
    ~0.3 s); table and column names come from the table objects and are quoted by the dialect.
    """
    quote = engine.dialect.identifier_preparer.quote
    snap: Snapshot = {}
    with engine.connect() as conn:
        for table in tables:
            cols = [c.name for c in table.columns]
            pk_idx = [cols.index(c.name) for c in table.primary_key.columns]
            sql = f"SELECT {', '.join(quote(c) for c in cols)} FROM {quote(table.name)}"
            rows: dict[tuple, tuple] = {}
            for i, row in enumerate(conn.exec_driver_sql(sql).fetchall()):
                row = tuple(row)
                rows[tuple(row[j] for j in pk_idx) if pk_idx else (i, *row)] = row
            snap[table.name] = rows
    return snap


def diff_snapshots(before: Snapshot, after: Snapshot,
                   tables: Iterable[sa.Table] | None = None) -> list[Change]:
    """Row-level changes from ``before`` to ``after`` in a stable order (table, key, field): one
    ``Change`` per updated field, inserts with ``field=None`` and ``after`` = row, deletes with
    ``field=None``, ``before`` = row and ``after=None``. ``tables`` defaults to ``apis.cphos.tables``."""
    by_name: Mapping[str, sa.Table] = {tb.name: tb for tb in tables} if tables is not None else t.metadata.tables
    changes: list[Change] = []
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name, {}), after.get(name, {})
        if a == b:  # the common case, compared in C
            continue
        table = by_name[name]
        cols = [c.name for c in table.columns]
        pk = [c.name for c in table.primary_key.columns]
        for key in sorted(set(b) | set(a), key=repr):
            keyd = dict(zip(pk, key))
            if key not in a:
                changes.append(Change(table=name, key=keyd, before=dict(zip(cols, b[key]))))
            elif key not in b:
                changes.append(Change(table=name, key=keyd, after=dict(zip(cols, a[key]))))
            elif a[key] != b[key]:
                changes += [Change(table=name, key=keyd, field=col, before=old, after=new)
                            for col, old, new in zip(cols, b[key], a[key]) if old != new]
    return changes


def checksums(engine: sa.Engine, tables: Iterable[sa.Table] | None = None) -> dict[str, str]:
    """A sha256 of every table's rows (ordered by primary key): equal dicts = unchanged database."""
    out = {}
    with engine.connect() as conn:
        for table in tables or t.metadata.sorted_tables:
            rows = conn.execute(sa.select(table).order_by(*table.primary_key.columns)).all()
            out[table.name] = hashlib.sha256(json.dumps([list(r) for r in rows], default=str).encode()).hexdigest()
    return out


# --- typed values ------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _column_type(table: str, column: str) -> type | None:
    tb = t.metadata.tables.get(table)
    if tb is None or column not in tb.c:
        return None
    try:
        return tb.c[column].type.python_type
    except NotImplementedError:  # exotic column types: compare as text
        return str


def coerce(table: str, column: str, value: Any) -> Any:
    """``value`` as the column's Python type (``'null'``/``'none'`` → None, quotes stripped);
    unknown columns and values that do not convert keep the value as it is."""
    if value is None:
        return None
    pytype = _column_type(table, column)
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in NULLS:
            return None
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1]
        value = text
    try:
        if pytype is int or pytype is bool:
            return int(float(value)) if isinstance(value, (str, float, Decimal)) else int(value)
        if pytype in (float, Decimal):
            return float(value)
        if pytype is str:
            return str(value)
    except (TypeError, ValueError):
        return value  # a non-numeric value in a numeric column simply will not compare equal
    return value


# --- the expected_effect notation --------------------------------------------------------------

_UPDATE = re.compile(r"^(?P<table>\w+)\[(?P<key>[^\]]+)\]\.(?P<field>\w+)=(?P<value>.*)$")
_INSERT = re.compile(r"^(?P<table>\w+)\+\{(?P<fields>.*)\}$")
_PAIR = re.compile(r"\s*(\w+)\s*=\s*(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^,]*)\s*(?:,|$)")


def _pairs(text: str, original: str) -> dict[str, str]:
    out: dict[str, str] = {}
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _PAIR.match(text, pos)
        if not m or m.end() == pos:
            raise EffectSyntaxError(f"cannot parse {text[pos:]!r} in effect {original!r}")
        out[m.group(1)] = m.group(2).strip()
        pos = m.end()
    return out


def parse_effect(effect: str | None) -> list[Change]:
    """Parse an ``expected_effect`` annotation (``none``, ``table[id=N].field=value; ...`` and
    ``table+{f=v,...}``) into changes; values stay strings until compared (``fact`` types them).
    Malformed text raises ``EffectSyntaxError``."""
    if effect is None or effect.strip().lower() in ("", "none"):
        return []
    changes = []
    for part in (p.strip() for p in effect.split(";")):
        if not part:
            continue
        if m := _UPDATE.match(part):
            changes.append(Change(table=m["table"], key=_pairs(m["key"], effect), field=m["field"],
                                  after=m["value"].strip()))
        elif m := _INSERT.match(part):
            row = _pairs(m["fields"], effect)
            table = t.metadata.tables.get(m["table"])
            pk = [c.name for c in table.primary_key.columns] if table is not None else []
            changes.append(Change(table=m["table"], key={k: row.get(k) for k in pk}, after=row))
        else:
            raise EffectSyntaxError(f"cannot parse {part!r} in effect {effect!r}")
    return changes


# --- comparison --------------------------------------------------------------------------------

def fact(change: Change) -> Fact:
    """``change`` reduced to typed, comparable values (the end state, not ``before``):
    ``("update", table, key, field, after)``, ``("insert", table, row)`` or ``("delete", table, row)``
    with ``key``/``row`` as sorted ``(column, value)`` tuples."""
    tb = change.table
    if change.field is not None:
        key = tuple(sorted((k, coerce(tb, k, v)) for k, v in change.key.items()))
        return ("update", tb, key, change.field, coerce(tb, change.field, change.after))
    op, row = ("insert", change.after) if change.after is not None else ("delete", change.before or {})
    return (op, tb, tuple(sorted((k, coerce(tb, k, v)) for k, v in row.items())))


def effect_set(changes: Iterable[Change]) -> set[Fact]:
    """Changes as a set of typed facts: equal sets = the same effect (inserts compare whole rows)."""
    return {fact(c) for c in changes}


def match_effect(expected: Iterable[Change], actual: Iterable[Change]) -> tuple[list[Fact], list[Fact]]:
    """The expected facts that ``actual`` lacks and the actual facts nobody expected.

    An expected insert names the fields it fixes; the inserted row must agree on those, and its
    other columns (e.g. ``create_time``) are free — their values cannot be known in advance.
    """
    missing: list[Fact] = []
    unmatched = [fact(c) for c in actual]
    for w in map(fact, expected):
        hit = next((g for g in unmatched
                    if (w[0] == "insert" == g[0] and w[1] == g[1] and set(w[2]) <= set(g[2])) or w == g), None)
        if hit is None:
            missing.append(w)
        else:
            unmatched.remove(hit)
    return missing, unmatched
