"""Database state for grading: snapshots of the ``cmf_tp_*`` tables, their diff, and the
``expected_effect`` annotation of the QA files parsed into the same shape.

A change is a dict: ``{"op": "update", "table", "key": {"id": 706}, "field", "before", "after"}``,
``{"op": "insert", "table", "row": {...}}`` or ``{"op": "delete", "table", "row": {...}}``.
Values are compared after coercion to the column's Python type (read from the database schema,
which mirrors the MySQL DDL), so the JSON dump's ``school_id: "3"`` and the annotation's ``3`` agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

TABLE_PREFIX = "cmf_tp_"
NULLS = {"null", "none"}


class EffectSyntaxError(ValueError):
    """An ``expected_effect`` string that does not follow the README's grammar (code ``eval_effect``)."""

    code = "eval_effect"


@dataclass
class Schema:
    """Which tables to watch, their primary keys and each column's Python type."""

    tables: dict[str, sa.Table]
    types: dict[str, dict[str, type]] = field(default_factory=dict)

    @classmethod
    def from_metadata(cls, metadata: sa.MetaData, prefix: str = TABLE_PREFIX) -> "Schema":
        """The schema of the ``prefix*`` tables of a SQLAlchemy ``MetaData`` (no database needed)."""
        tables = {n: t for n, t in metadata.tables.items() if n.startswith(prefix)}
        return cls(tables=tables, types={n: _types(t) for n, t in tables.items()})

    @classmethod
    def reflect(cls, engine: sa.Engine, prefix: str = TABLE_PREFIX) -> "Schema":
        """Reflect the tables named ``prefix*`` (the host system's tables, not the agent's own)."""
        md = sa.MetaData()
        names = [n for n in sa.inspect(engine).get_table_names() if n.startswith(prefix)]
        md.reflect(engine, only=names)
        return cls(tables=dict(md.tables), types={n: _types(t) for n, t in md.tables.items()})

    def coerce(self, table: str, column: str, value: Any) -> Any:
        """``value`` as the column's Python type; unknown columns keep the value as it is."""
        if value is None:
            return None
        pytype = self.types.get(table, {}).get(column)
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


def _types(table: sa.Table) -> dict[str, type]:
    out: dict[str, type] = {}
    for col in table.columns:
        try:
            out[col.name] = col.type.python_type
        except NotImplementedError:  # exotic column types: compare as text
            out[col.name] = str
    return out


Snapshot = dict[str, dict[tuple, tuple]]  # table -> primary key -> row values in column order


def snapshot(engine: sa.Engine, schema: Schema) -> Snapshot:
    """Every row of every watched table as plain tuples, keyed by primary key (whole row when none).

    Plain driver SQL and tuples: ~13k CPHOS rows read in ~0.05 s (SQLAlchemy row mappings took
    ~0.3 s); table names come from reflection and are quoted by the dialect, never from input.
    """
    quote = engine.dialect.identifier_preparer.quote
    snap: Snapshot = {}
    with engine.connect() as conn:
        for name, table in schema.tables.items():
            cols = [c.name for c in table.columns]
            pk_idx = [cols.index(c.name) for c in table.primary_key.columns]
            sql = f"SELECT {', '.join(quote(c) for c in cols)} FROM {quote(name)}"
            rows: dict[tuple, tuple] = {}
            for i, row in enumerate(conn.exec_driver_sql(sql).fetchall()):
                row = tuple(row)
                rows[tuple(row[j] for j in pk_idx) if pk_idx else (i, *row)] = row
            snap[name] = rows
    return snap


def diff(before: Snapshot, after: Snapshot, schema: Schema) -> list[dict]:
    """The changes from ``before`` to ``after``, in a stable order (table, key, field)."""
    changes: list[dict] = []
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name, {}), after.get(name, {})
        if a == b:  # the common case, compared in C
            continue
        table = schema.tables[name]
        cols = [c.name for c in table.columns]
        pk = [c.name for c in table.primary_key.columns]
        for key in sorted(set(b) | set(a), key=repr):
            if key not in a:
                changes.append({"op": "delete", "table": name, "row": dict(zip(cols, b[key]))})
            elif key not in b:
                changes.append({"op": "insert", "table": name, "row": dict(zip(cols, a[key]))})
            elif a[key] != b[key]:
                for col, old, new in zip(cols, b[key], a[key]):
                    if old != new:
                        changes.append({"op": "update", "table": name, "key": dict(zip(pk, key)),
                                        "field": col, "before": old, "after": new})
    return changes


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


def parse_effect(effect: str | None) -> list[dict]:
    """Parse an ``expected_effect`` annotation (``none``, ``table[id=N].field=value; ...`` and
    ``table+{f=v,...}``) into changes; values stay strings until compared."""
    if effect is None or effect.strip().lower() in ("", "none"):
        return []
    changes = []
    for part in (p.strip() for p in effect.split(";")):
        if not part:
            continue
        if m := _UPDATE.match(part):
            changes.append({"op": "update", "table": m["table"], "key": _pairs(m["key"], effect),
                            "field": m["field"], "after": m["value"].strip()})
        elif m := _INSERT.match(part):
            changes.append({"op": "insert", "table": m["table"], "row": _pairs(m["fields"], effect)})
        else:
            raise EffectSyntaxError(f"cannot parse {part!r} in effect {effect!r}")
    return changes


def _norm(change: dict, schema: Schema) -> tuple:
    t = change["table"]
    if change["op"] == "update":
        key = tuple(sorted((k, schema.coerce(t, k, v)) for k, v in change["key"].items()))
        return ("update", t, key, change["field"], schema.coerce(t, change["field"], change["after"]))
    row = tuple(sorted((k, schema.coerce(t, k, v)) for k, v in change["row"].items()))
    return (change["op"], t, row)


def compare_effect(expected: list[dict], actual: list[dict], schema: Schema) -> tuple[bool, list[str]]:
    """Whether ``actual`` is exactly ``expected`` (nothing missing, nothing extra), with reasons.

    An expected insert names the fields it fixes; the inserted row must agree on those, and its
    other columns (e.g. ``create_time``) are free — their values cannot be known in advance.
    """
    problems: list[str] = []
    want = [_norm(c, schema) for c in expected]
    got = [_norm(c, schema) for c in actual]
    unmatched_got = list(got)
    for w in want:
        hit = None
        for g in unmatched_got:
            if w[0] == "insert" == g[0] and w[1] == g[1]:
                if set(w[2]) <= set(g[2]):
                    hit = g
                    break
            elif w == g:
                hit = g
                break
        if hit is None:
            problems.append(f"missing change {_show(w)}")
        else:
            unmatched_got.remove(hit)
    problems += [f"unexpected change {_show(g)}" for g in unmatched_got]
    return not problems, problems


def _show(norm: tuple) -> str:
    if norm[0] == "update":
        key = ",".join(f"{k}={v}" for k, v in norm[2])
        return f"{norm[1]}[{key}].{norm[3]}={norm[4]!r}"
    sign = "+" if norm[0] == "insert" else "-"
    return f"{norm[1]}{sign}{{{', '.join(f'{k}={v!r}' for k, v in norm[2])}}}"
