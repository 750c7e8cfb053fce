"""The `chops db` and `chops api` commands, end to end through click (SQLite and MariaDB)."""

from __future__ import annotations

import csv
import json

import sqlalchemy as sa
from click.testing import CliRunner

from apis.cphos import tables as t
from apis.cphos.state import effect_set, parse_effect
from chops.cli import main
from chops.db import make_engine
from chops.domain.outcomes import Change


def run(*args: str, ok: bool = True):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def counts(url: str) -> dict[str, int]:
    engine = make_engine(url)
    with engine.connect() as conn:
        out = {tb.name: conn.execute(sa.select(sa.func.count()).select_from(tb)).scalar() for tb in t.CPHOS_TABLES}
    engine.dispose()
    return out


def test_init_load_is_idempotent(db_url, cphos_dir):
    run("db", "init", "--database-url", db_url)
    run("db", "init", "--database-url", db_url)
    out = run("db", "load-cphos", str(cphos_dir / "database"), "--no-progress", "--database-url", db_url).output
    assert "14048 rows" in out
    first = counts(db_url)
    run("db", "load-cphos", str(cphos_dir / "database"), "--no-progress", "--database-url", db_url)
    assert counts(db_url) == first
    assert first["cmf_tp_member"] == 900 and first["cmf_tp_test_paper"] == 9572 and first["cmf_tp_correct"] == 13


def test_load_cphos_needs_the_dump(sqlite_url, tmp_path):
    res = run("db", "load-cphos", str(tmp_path), "--database-url", sqlite_url, ok=False)
    assert res.exit_code != 0 and "cmf_tp_member.json" in res.output


def test_seed_demo_then_call(db_url):
    run("db", "seed-demo", "--database-url", db_url)
    run("db", "seed-demo", "--database-url", db_url)
    assert counts(db_url)["cmf_tp_member"] == 8
    dry = json.loads(run("api", "call", "ChangeAllTypesUploadLimit", "--as", "demo_leader", "--args", '{"Limit": 40}',
                         "--dry-run", "--database-url", db_url).output)
    assert (dry["outcome"], dry["dry_run"], dry["committed"]) == ("ok", True, False)
    assert dry["diff"] == [{"table": "cmf_tp_member", "key": {"id": 2}, "field": "limit", "before": 20, "after": 40}]
    prof = json.loads(run("api", "profile", "--as", "demo_leader", "--database-url", db_url).output)
    assert prof["limit"] == 20
    args = ["api", "call", "ChangeAllTypesUploadLimit", "--as", "demo_leader", "--args", '{"Limit": 40}',
            "--idempotency-key", "cli-1", "--database-url", db_url]
    first, second = json.loads(run(*args).output), json.loads(run(*args).output)
    assert (first["committed"], first["replayed"], second["replayed"]) == (True, False, True)
    assert json.loads(run("api", "profile", "--as", "demo_leader", "--database-url", db_url).output)["limit"] == 40
    read = json.loads(run("api", "call", "GetTeacherInfoByName", "--as", "demo_admin", "--args",
                          '{"TeacherName": "Lena Leader"}', "--database-url", db_url).output)
    assert read["outcome"] == "ok" and read["data"][0]["limit"] == 40
    assert json.loads(run("api", "profile", "--as", "ghost", "--database-url", db_url).output) is None


def test_bad_args_json_is_a_usage_error(sqlite_url):
    res = run("api", "call", "ChangeAllTypesUploadLimit", "--as", "demo_leader", "--args", "{Limit: 4",
              "--database-url", sqlite_url, ok=False)
    assert res.exit_code == 2 and "not JSON" in res.output


def test_api_list():
    items = json.loads(run("api", "list", "--json").output)
    assert len(items) == 10
    by_name = {i["name"]: i for i in items}
    assert by_name["AddNewSchoolByName"]["admin_only"] and by_name["AddNewSchoolByName"]["writes"]
    assert set(by_name["ChangeAllTypesUploadLimit"]["args_schema"]["properties"]) == {"Limit"}
    text = run("api", "list").output
    assert "GetTeacherInfoByName [read, admin only]" in text


def test_load_then_call_reproduces_every_visible_row(sqlite_url, cphos_dir):
    """The issue's 'done when': `chops db load-cphos` then `chops api call` gives every row's outcome."""
    run("db", "load-cphos", str(cphos_dir / "database"), "--no-progress", "--database-url", sqlite_url)
    with open(cphos_dir / "qa" / "system.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 60
    for row in rows:
        out = json.loads(run("api", "call", row["gold_api"], "--as", row["nickname"], "--args", row["gold_args"],
                             "--dry-run", "--database-url", sqlite_url).output)
        assert out["outcome"] == row["outcome"], (row["src_row"], out["message"])
        got = effect_set(Change(**c) for c in out["diff"])
        assert got == effect_set(parse_effect(row["expected_effect"])), row["src_row"]
