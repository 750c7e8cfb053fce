"""ORACLE: every row of qa/system.csv, run through ``Api.call`` (commit mode) as the row's nickname on
a freshly loaded CPHOS database, gives the row's outcome, a diff equal to ``expected_effect``, and
exactly that change in the database (nothing else)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import uuid

import pytest
import sqlalchemy as sa

from apis.cphos import tables as t
from apis.cphos.loaders import load_cphos, read_cphos
from apis.cphos.service import Api
from apis.cphos.state import diff_snapshots, effect_set, parse_effect, snapshot
from chops import tables as ct
from chops.db import make_engine
from tests.conftest import mariadb_database

WRITABLE = (t.member, t.school)  # the only cmf_tp_* tables an operation writes
CPHOS_DIR = os.environ.get("CHOPS_CPHOS_DIR")


def _rows():
    from pathlib import Path

    base = Path(CPHOS_DIR) if CPHOS_DIR else Path(__file__).resolve().parents[3] / "shared" / "cphos"
    path = base / "qa" / "system.csv"
    if not path.is_file():  # the cphos_dir fixture fails loudly in the test itself
        return [pytest.param(None, id="dataset-missing")]
    with open(path, newline="", encoding="utf-8") as f:
        return [pytest.param(r, id=f"{r['group_id']}-row{r['src_row']}") for r in csv.DictReader(f)]


ROWS = _rows()


def check_row(engine: sa.Engine, row: dict, before) -> None:
    """Run one QA row and check outcome, diff and the real change against the annotation."""
    args = json.loads(row["gold_args"])
    result = Api(engine).call(row["gold_api"], row["nickname"], args, idempotency_key=f"oracle-{uuid.uuid4()}")
    expected = effect_set(parse_effect(row["expected_effect"]))
    assert result.outcome.value == row["outcome"], result.message
    assert effect_set(result.diff) == expected, [c.effect() for c in result.diff]
    assert effect_set(diff_snapshots(before, snapshot(engine, WRITABLE))) == expected
    assert result.committed == (result.outcome.succeeded and row["gold_api"] not in
                                ("GetTeacherInfoByName", "GetTeacherInfoBySchoolName"))


@pytest.fixture(scope="module")
def sqlite_template(tmp_path_factory, cphos_dir):
    path = tmp_path_factory.mktemp("oracle") / "template.db"
    engine = make_engine(f"sqlite:///{path}")
    load_cphos(engine, cphos_dir / "database")
    before = snapshot(engine, WRITABLE)
    engine.dispose()
    return path, before


@pytest.mark.parametrize("row", ROWS)
def test_oracle_sqlite(row, sqlite_template, tmp_path):
    template, before = sqlite_template
    db = tmp_path / "case.db"
    shutil.copy(template, db)
    engine = make_engine(f"sqlite:///{db}")
    try:
        check_row(engine, row, before)
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def mariadb_loaded(cphos_dir):
    """One CPHOS database per module; each case restores the tables it may touch afterwards."""
    with mariadb_database() as url:
        engine = make_engine(url)
        load_cphos(engine, cphos_dir / "database")
        originals = read_cphos(cphos_dir / "database")
        yield engine, snapshot(engine, WRITABLE), {tb: originals[tb] for tb in WRITABLE}
        engine.dispose()


@pytest.mark.mariadb
@pytest.mark.parametrize("row", ROWS)
def test_oracle_mariadb(row, mariadb_loaded):
    engine, before, originals = mariadb_loaded
    try:
        check_row(engine, row, before)
    finally:
        with engine.begin() as conn:  # back to the freshly loaded state for the next row
            conn.execute(ct.audit_log.delete())
            for table, rows in originals.items():
                conn.execute(table.delete())
                conn.execute(table.insert(), rows)
