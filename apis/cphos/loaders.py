"""Bulk loaders: the CPHOS JSON dump and our own demo data, both replacing the ``cmf_tp_*`` rows
in one transaction (idempotent: running twice gives the same database)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import sqlalchemy as sa

from apis.cphos import tables as t
from apis.cphos.db import init_schema

BATCH = 2000  # rows per executemany; large enough for speed, small enough for a smooth progress bar

# file name (relative to the dump directory) -> table; the two rebuilt tables live in reconstructed/
CPHOS_FILES: dict[str, sa.Table] = {
    "cmf_tp_member.json": t.member,
    "cmf_tp_admin.json": t.admin,
    "cmf_tp_area.json": t.area,
    "cmf_tp_school.json": t.school,
    "cmf_tp_exam.json": t.exam,
    "cmf_tp_student.json": t.student,
    "cmf_tp_test_paper.json": t.test_paper,
    "reconstructed/cmf_tp_subject.json": t.subject,
    "reconstructed/cmf_tp_correct.json": t.correct,
}


def _to_row(table: sa.Table, obj: dict[str, Any]) -> dict[str, Any]:
    """A JSON object as a row of ``table``: renamed/typed where the dump differs from MySQL."""
    row = dict(obj)
    if table is t.area and "area" in row:
        row["area_name"] = row.pop("area")  # the MySQL column is area_name
    if table is t.member and row.get("school_id") is not None:
        row["school_id"] = int(row["school_id"])  # a string of digits in the JSON, INT in MySQL
    cols = table.c.keys()
    return {k: v for k, v in row.items() if k in cols}


def read_cphos(directory: Path) -> dict[sa.Table, list[dict[str, Any]]]:
    """Read the dump's nine JSON files into rows per table (fails loudly if one is missing)."""
    directory = Path(directory)
    out: dict[sa.Table, list[dict[str, Any]]] = {}
    for rel, table in CPHOS_FILES.items():
        path = directory / rel
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing; DIR must be the CPHOS 'database' folder")
        out[table] = [_to_row(table, o) for o in json.loads(path.read_text(encoding="utf-8"))]
    return out


def replace_cphos_rows(engine: sa.Engine, rows: dict[sa.Table, list[dict[str, Any]]], *,
                       progress: bool = False) -> dict[str, int]:
    """Create the schema if needed, then in ONE transaction delete every ``cmf_tp_*`` row and insert
    ``rows`` with executemany batches. Returns the row count per table."""
    from tqdm import tqdm

    init_schema(engine)
    total = sum(len(v) for v in rows.values())
    with engine.begin() as conn, tqdm(total=total, unit="row", disable=not progress, desc="loading") as bar:
        for table in t.CPHOS_TABLES:
            conn.execute(table.delete())
        for table, table_rows in rows.items():
            bar.set_postfix_str(table.name)
            for batch in _batches(table_rows, BATCH):
                conn.execute(table.insert(), batch)
                bar.update(len(batch))
    return {table.name: len(v) for table, v in rows.items()}


def _batches(rows: list[dict[str, Any]], size: int) -> Iterable[list[dict[str, Any]]]:
    for i in range(0, len(rows), size):
        yield rows[i:i + size]


def load_cphos(engine: sa.Engine, directory: Path, *, progress: bool = False) -> dict[str, int]:
    """Replace the ``cmf_tp_*`` contents with the CPHOS dump in ``directory`` (the ``database`` folder)."""
    return replace_cphos_rows(engine, read_cphos(directory), progress=progress)


def seed_demo(engine: sa.Engine, *, progress: bool = False) -> dict[str, int]:
    """Replace the ``cmf_tp_*`` contents with the project's own small demo data set."""
    from apis.cphos.demo import demo_rows

    return replace_cphos_rows(engine, demo_rows(), progress=progress)
