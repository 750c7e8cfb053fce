"""`chops staff add/list/disable` end to end through click, on SQLite and MariaDB."""

from __future__ import annotations

from click.testing import CliRunner

from chops.cli import main
from chops.db import make_engine
from chops.staff_accounts import StaffAccounts

PASSWORD = "a long staff passphrase"


def run(*args: str, input: str | None = None, ok: bool = True):
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    assert (result.exit_code == 0) == ok, result.output
    return result


def test_add_list_and_disable(db_url):
    run("db", "init", "--database-url", db_url)
    out = run("staff", "add", "sam", "--display-name", "Sam Staff", "--database-url", db_url,
              input=f"{PASSWORD}\n{PASSWORD}\n").output
    assert "added staff account sam (Sam Staff)" in out and PASSWORD not in out  # the prompt hides it
    run("staff", "add", "kim", "--password-stdin", "--database-url", db_url, input="kims own passphrase\n")
    assert "weak_password" in run("staff", "add", "lee", "--password-stdin", "--database-url", db_url,
                                  input="short\n", ok=False).output
    assert "name_taken" in run("staff", "add", "sam", "--password-stdin", "--database-url", db_url,
                               input=f"{PASSWORD}\n", ok=False).output
    assert "invalid_name" in run("staff", "add", "Sam Staff", "--password-stdin", "--database-url", db_url,
                                 input=f"{PASSWORD}\n", ok=False).output
    rows = [line.split("\t") for line in run("staff", "list", "--database-url", db_url).output.splitlines()]
    assert [(r[0], r[1], r[3]) for r in rows] == [("kim", "kim", "active"), ("sam", "Sam Staff", "active")]

    engine = make_engine(db_url)
    accounts = StaffAccounts(engine)
    assert accounts.authenticate("kim", "kims own passphrase").name == "kim"
    run("staff", "disable", "kim", "--database-url", db_url)
    assert accounts.authenticate("kim", "kims own passphrase") is None
    assert "not_found" in run("staff", "disable", "nobody", "--database-url", db_url, ok=False).output
    assert [line.split("\t")[3] for line in run("staff", "list", "--database-url", db_url).output.splitlines()] == [
        "disabled", "active"]
    engine.dispose()
