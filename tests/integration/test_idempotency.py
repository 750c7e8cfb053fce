"""Idempotency keys on SQLite and MariaDB: a repeat replays the first result and writes nothing, also
when 20 threads commit the same key at once."""

from __future__ import annotations

import threading

import sqlalchemy as sa

from apis.cphos import tables as t
from apis.cphos.service import Api
from apis.cphos.state import checksums
from chops import tables as ct
from chops.domain.outcomes import Outcome

THREADS = 20


def audit_rows(engine):
    with engine.connect() as conn:
        return conn.execute(sa.select(ct.audit_log)).mappings().all()


def race(engine, op, nick, args, key):
    """Start THREADS calls with the same key at the same moment; return their results."""
    return race_with(lambda api: api.call(op, nick, args, idempotency_key=key), engine)


def race_with(run, engine):
    """Start THREADS ``run(api)`` at the same moment; return their results."""
    api, barrier, results, errors = Api(engine), threading.Barrier(THREADS), [None] * THREADS, []

    def worker(i):
        try:
            barrier.wait()
            results[i] = run(api)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors
    return results


def test_twenty_threads_same_key_write_once(engine):
    results = race(engine, "AddNewSchoolByName", "demo_admin",
                   {"SchoolName": "Harbor School", "AreaName": "Lakeside"}, "race-1")
    assert sum(not r.replayed for r in results) == 1
    assert {(r.outcome, r.committed) for r in results} == {(Outcome.OK, True)}  # nobody saw ok_noop
    assert len({tuple(c.effect() for c in r.diff) for r in results}) == 1
    rows = audit_rows(engine)
    assert len(rows) == 1 and rows[0]["idempotency_key"] == "race-1" and rows[0]["outcome"] == "ok"
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(t.school)
                            .where(t.school.c.school_name == "Harbor School")).scalar() == 1


def test_twenty_threads_different_keys_each_write(engine):
    """Different keys are different requests: all commit, none lost (retries on id races)."""
    api, barrier, results = Api(engine), threading.Barrier(8), []

    def worker(i):
        barrier.wait()
        results.append(api.call("AddNewSchoolByName", "demo_admin", {"SchoolName": f"School {i}", "AreaName": "Lakeside"},
                                idempotency_key=f"k-{i}"))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    [th.start() for th in threads]
    [th.join(120) for th in threads]
    assert sorted(r.outcome for r in results) == [Outcome.OK] * 8
    assert len(audit_rows(engine)) == 8


def test_repeat_replays_and_writes_nothing(engine):
    api = Api(engine)
    first = api.call("ChangeAllTypesUploadLimit", "demo_leader", {"Limit": 40}, idempotency_key="k", request_id="r1")
    assert first.outcome == Outcome.OK and first.committed and not first.replayed
    with engine.begin() as conn:  # somebody changes the limit again in between
        conn.execute(t.member.update().where(t.member.c.id == 2).values(limit=7))
    sums = checksums(engine)
    again = api.call("ChangeAllTypesUploadLimit", "demo_leader", {"Limit": 40}, idempotency_key="k")
    assert again.replayed and again.diff == first.diff and again.message == first.message
    assert checksums(engine) == sums
    (row,) = audit_rows(engine)
    assert (row["nickname"], row["user_id"], row["operation"], row["request_id"]) == ("demo_leader", 2,
                                                                                     "ChangeAllTypesUploadLimit", "r1")
    assert '"before":20' in row["diff_json"].replace(" ", "") and '"after":40' in row["diff_json"].replace(" ", "")


def test_key_reused_for_another_request_is_refused(engine):
    api = Api(engine)
    api.call("ChangeAllTypesUploadLimit", "demo_leader", {"Limit": 40}, idempotency_key="k")
    sums = checksums(engine)
    for nick, args in [("demo_leader", {"Limit": 41}), ("demo_vice", {"Limit": 40})]:
        res = api.call("ChangeAllTypesUploadLimit", nick, args, idempotency_key="k")
        assert res.outcome == Outcome.REFUSED_INVALID_ARG and "different request" in res.message
    assert checksums(engine) == sums


def test_refusals_and_dry_runs_leave_the_key_unused(engine):
    api = Api(engine)
    assert api.call("ChangeAllTypesUploadLimit", "demo_leader", {"Limit": 999}, idempotency_key="k").outcome \
        == Outcome.REFUSED_INVALID_ARG
    assert api.call("ChangeAllTypesUploadLimit", "demo_leader", {"Limit": 40}, idempotency_key="k",
                    dry_run=True).committed is False
    assert audit_rows(engine) == []
    # the refused call did not consume the key: a corrected request may use it
    ok = api.call("ChangeAllTypesUploadLimit", "demo_leader", {"Limit": 40}, idempotency_key="k")
    assert ok.outcome == Outcome.OK and not ok.replayed


def test_twenty_threads_same_key_commit_a_plan_once(engine):
    """``Api.call_plan``: the same key from 20 threads commits both steps once; every thread gets the result."""
    steps = [("AddNewSchoolByName", {"SchoolName": "Harbor School", "AreaName": "Lakeside"}),
             ("ChangeAllTypesUploadLimit", {"Limit": 77})]
    results = race_with(lambda api: api.call_plan("demo_admin", steps, idempotency_key="plan-race"), engine)
    assert sum(not r.replayed for r in results) == 1
    assert {(r.outcome, r.committed, len(r.steps)) for r in results} == {(Outcome.OK, True, 2)}
    assert [(r["idempotency_key"], r["outcome"]) for r in audit_rows(engine)] == [("plan-race", "ok"),
                                                                                  ("plan-race#2", "ok")]
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(t.school)
                            .where(t.school.c.school_name == "Harbor School")).scalar() == 1
