"""Every operation x every outcome, on SQLite and on real MariaDB, over the demo data set.

Each case runs as a dry run (outcome + diff, database unchanged) and then in commit mode (same
outcome + diff, and exactly that change in the database); the demo data is reseeded between cases.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from apis.cphos import tables as t
from apis.cphos.loaders import seed_demo
from apis.cphos.registry import OPERATIONS
from apis.cphos.service import Api
from apis.cphos.state import checksums, diff_snapshots, effect_set, parse_effect, snapshot
from chops import tables as ct
from chops.db import make_engine
from chops.domain.outcomes import Outcome

OK, NOOP, MISSING, INVALID = Outcome.OK, Outcome.OK_NOOP, Outcome.REFUSED_MISSING_ARGS, Outcome.REFUSED_INVALID_ARG
PRECOND, PERM, NOT_IN = Outcome.REFUSED_PRECONDITION, Outcome.REFUSED_PERMISSION, Outcome.NOT_IN_SYSTEM

CASES = {
    "ChangeAllTypesMarkingSubject": [
        ("demo_leader", {"SubjectIndex": 9}, OK, "cmf_tp_member[id=2].subject=9"),
        ("demo_arbiter", {"SubjectIndex": 9}, OK, "cmf_tp_member[id=5].subject=9"),  # only type 1 must finish
        ("demo_leader", {"SubjectIndex": 2}, NOOP, "none"),
        ("demo_busy_leader", {"SubjectIndex": 9}, PRECOND, "none"),
        ("demo_leader", {"SubjectIndex": 11}, INVALID, "none"),
        ("demo_leader", {"SubjectIndex": 0}, INVALID, "none"),
        ("demo_leader", {"SubjectIndex": "nine"}, INVALID, "none"),
        ("demo_leader", {}, MISSING, "none"),
    ],
    "VerifyTeacherUserToBeSupTeacher": [
        ("demo_pending", {"Name": "Patricia Pending", "ViewProblem": 6}, OK,
         "cmf_tp_member[id=6].user_name=Patricia Pending; cmf_tp_member[id=6].subject=6; "
         "cmf_tp_member[id=6].school_id=3; cmf_tp_member[id=6].status=1"),
        ("demo_leader", {"Name": "Lena Leader", "ViewProblem": 2}, NOOP, "none"),  # already approved
        ("demo_pending", {"Name": "Patricia Pending", "ViewProblem": None}, MISSING, "none"),
        ("demo_pending", {"Name": "", "ViewProblem": 3}, MISSING, "none"),
        ("demo_pending", {"Name": "Patricia Pending", "ViewProblem": 0}, INVALID, "none"),
    ],
    "MakeAllTypesToBeArbiter": [
        ("demo_leader", {}, OK, "cmf_tp_member[id=2].type=2"),
        ("demo_vice", {}, OK, "cmf_tp_member[id=4].type=2; cmf_tp_member[id=4].p_id=0"),
        ("demo_arbiter", {}, NOOP, "none"),
        ("demo_busy_leader", {}, PRECOND, "none"),
    ],
    "MakeAllTypesToBeSupTeacher": [
        ("demo_arbiter", {}, OK, "cmf_tp_member[id=5].type=1"),
        ("demo_second_vice", {}, OK, "cmf_tp_member[id=7].type=1; cmf_tp_member[id=7].p_id=0"),
        ("demo_busy_leader", {}, NOOP, "none"),
    ],
    "MakeAllTypesToBeSubCoach": [
        ("demo_other_leader", {"TeamLeaderName": "Lena Leader"}, OK,
         "cmf_tp_member[id=8].type=3; cmf_tp_member[id=8].p_id=2"),
        ("demo_arbiter", {"TeamLeaderName": "Lena Leader"}, OK,
         "cmf_tp_member[id=5].type=3; cmf_tp_member[id=5].p_id=2"),
        ("demo_vice", {"TeamLeaderName": "Lena Leader"}, NOOP, "none"),
        ("demo_busy_leader", {"TeamLeaderName": "Lena Leader"}, PRECOND, "none"),
        ("demo_leader", {"TeamLeaderName": "Lena Leader"}, INVALID, "none"),  # oneself
        ("demo_leader", {"TeamLeaderName": "Vera Vice"}, INVALID, "none"),  # not a team leader
        ("demo_leader", {"TeamLeaderName": "Pat Pending"}, INVALID, "none"),  # not approved
        ("demo_leader", {"TeamLeaderName": "Nobody Here"}, INVALID, "none"),
        ("demo_leader", {"TeamLeaderName": None}, MISSING, "none"),
    ],
    "ChangeAllTypesUploadLimit": [
        ("demo_leader", {"Limit": 40}, OK, "cmf_tp_member[id=2].limit=40"),
        ("demo_busy_leader", {"Limit": 0}, OK, "cmf_tp_member[id=3].limit=0"),
        ("demo_arbiter", {"Limit": 200}, OK, "cmf_tp_member[id=5].limit=200"),
        ("demo_leader", {"Limit": 20}, NOOP, "none"),
        ("demo_leader", {"Limit": 201}, INVALID, "none"),
        ("demo_leader", {"Limit": -1}, INVALID, "none"),
        ("demo_leader", {"Limit": None}, MISSING, "none"),
    ],
    "ChangeAllTypesSchool": [
        ("demo_leader", {"SchoolName": "Lakeside Academy"}, OK, "cmf_tp_member[id=2].school_id=2"),
        ("demo_leader", {"SchoolName": "Northbridge High School"}, NOOP, "none"),
        ("demo_leader", {"SchoolName": "lakeside academy"}, INVALID, "none"),  # names match exactly
        ("demo_leader", {"SchoolName": "Atlantis"}, INVALID, "none"),
        ("demo_leader", {}, MISSING, "none"),
    ],
    "AddNewSchoolByName": [
        ("demo_admin", {"SchoolName": "Harbor School", "AreaName": "Lakeside"}, OK,
         "cmf_tp_school+{id=5,area=2,school_name=Harbor School}"),
        ("demo_admin", {"SchoolName": "Lakeside Academy", "AreaName": "Lakeside"}, NOOP, "none"),
        ("demo_admin", {"SchoolName": "Lakeside Academy", "AreaName": "Northbridge"}, INVALID, "none"),
        ("demo_admin", {"SchoolName": "Harbor School", "AreaName": "Atlantis"}, INVALID, "none"),
        ("demo_admin", {"SchoolName": "Harbor School"}, MISSING, "none"),
        ("demo_leader", {"SchoolName": "Harbor School", "AreaName": "Lakeside"}, PERM, "none"),
    ],
    "GetTeacherInfoByName": [
        ("demo_admin", {"TeacherName": "Vera Vice"}, OK, "none"),
        ("demo_admin", {"TeacherName": "Nobody Here"}, OK, "none"),
        ("demo_admin", {"TeacherName": None}, MISSING, "none"),
        ("demo_leader", {"TeacherName": "Vera Vice"}, PERM, "none"),
    ],
    "GetTeacherInfoBySchoolName": [
        ("demo_admin", {"SchoolName": "Northbridge High School"}, OK, "none"),
        ("demo_admin", {"SchoolName": "Atlantis"}, OK, "none"),
        ("demo_admin", {"SchoolName": 12}, INVALID, "none"),
        ("demo_vice", {"SchoolName": "Northbridge High School"}, PERM, "none"),
    ],
}


def test_every_operation_has_cases():
    assert set(CASES) == set(OPERATIONS)


def reset(engine: sa.Engine) -> None:
    """Back to the pristine demo data (and an empty audit log)."""
    seed_demo(engine)
    with engine.begin() as conn:
        conn.execute(ct.audit_log.delete())


@pytest.fixture
def engine(db_url):
    eng = make_engine(db_url)
    reset(eng)
    yield eng
    eng.dispose()


def run_case(engine: sa.Engine, op: str, nick: str, args: dict, outcome: Outcome, effect: str) -> None:
    api, label = Api(engine), f"{op} as {nick} {args}"
    expected = effect_set(parse_effect(effect))
    sums, before = checksums(engine), snapshot(engine)
    dry = api.call(op, nick, args, dry_run=True)
    assert (dry.outcome, effect_set(dry.diff)) == (outcome, expected), f"{label}: {dry.message}"
    assert dry.message and not dry.committed
    assert checksums(engine) == sums, f"{label}: the dry run changed the database"
    real = api.call(op, nick, args, idempotency_key=f"{op}-{nick}-{len(str(args))}")
    assert (real.outcome, effect_set(real.diff)) == (outcome, expected), f"{label}: {real.message}"
    assert effect_set(diff_snapshots(before, snapshot(engine))) == expected, label
    writes = OPERATIONS[op].writes
    assert real.committed == (writes and outcome.succeeded), label
    with engine.connect() as conn:
        audited = conn.execute(sa.select(sa.func.count()).select_from(ct.audit_log)).scalar()
    assert audited == (1 if real.committed else 0), label


@pytest.mark.parametrize("op", sorted(CASES))
def test_operation_outcomes(engine, op):
    for nick, args, outcome, effect in CASES[op]:
        run_case(engine, op, nick, args, outcome, effect)
        reset(engine)


def test_identity_outcomes_for_every_operation(engine):
    """Unknown nickname, a pending user (only their application), an ambiguous nickname, an unknown
    operation: the same refusals for every operation."""
    api = Api(engine)
    with engine.begin() as conn:  # a second approved account with demo_other_leader's nickname
        conn.execute(t.member.insert().values(id=99, p_id=0, user_name="Twin", school_id=1, subject=1, status=1,
                                              type=1, limit=1, create_time=0, nickname="demo_other_leader"))
    sums = checksums(engine)
    for op in OPERATIONS:
        assert api.call(op, "nobody_at_all", {}).outcome == NOT_IN, op
        assert api.call(op, "DEMO_LEADER", {}).outcome == NOT_IN, op  # nicknames match exactly
        assert api.call(op, "demo_other_leader", {}).outcome == PRECOND, op
        if op != "VerifyTeacherUserToBeSupTeacher":
            res = api.call(op, "demo_pending", {})
            assert res.outcome == PERM and "waiting for approval" in res.message, op
    assert api.call("DropAllTables", "demo_admin", {}).outcome == INVALID
    assert checksums(engine) == sums


def test_reads_return_rows(engine):
    api = Api(engine)
    vice = api.call("GetTeacherInfoByName", "demo_admin", {"TeacherName": "Vera Vice"})
    assert [(r["id"], r["role"], r["team_leader_name"], r["school_name"], r["area_name"], r["limit"], r["subject"])
            for r in vice.data] == [(4, "vice team leader", "Lena Leader", "Northbridge High School", "Northbridge",
                                     10, 4)]
    assert api.call("GetTeacherInfoByName", "demo_admin", {"TeacherName": "Pat Pending"}).data == []
    school = api.call("GetTeacherInfoBySchoolName", "demo_admin", {"SchoolName": "Northbridge High School"})
    assert [r["id"] for r in school.data] == [1, 2, 4]
    assert api.call("GetTeacherInfoBySchoolName", "demo_admin", {"SchoolName": "Atlantis"}).data == []
    noop = api.call("AddNewSchoolByName", "demo_admin", {"SchoolName": "Lakeside Academy", "AreaName": "Lakeside"})
    assert noop.outcome == NOOP and noop.data == {"school_id": 2}


def test_profile_one_query(engine):
    api = Api(engine)
    statements = []
    sa.event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    busy = api.profile("demo_busy_leader")
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 1
    assert (busy.role, busy.problems_left, busy.current_exam, busy.school_name, busy.area_name) == \
        ("team leader", 3, "Autumn Physics Mock 2024", "Lakeside Academy", "Lakeside")
    vice = api.profile("demo_vice")
    assert (vice.type, vice.role, vice.team_leader_name, vice.problems_left) == (3, "vice team leader", "Lena Leader", 0)
    assert api.profile("demo_leader").problems_left == 0 and not api.profile("demo_leader").is_admin
    assert api.profile("demo_arbiter").problems_left == 2
    assert api.profile("demo_admin").is_admin
    pending = api.profile("demo_pending")
    assert pending.status == 0 and not pending.approved and "waiting for approval" in pending.describe()
    assert api.profile("nobody_at_all") is None
    assert "Problems left to mark in the current exam: 3" in busy.describe()
    with engine.begin() as conn:  # no exam in progress -> nothing left to mark
        conn.execute(t.exam.update().values(status=3))
    assert api.profile("demo_busy_leader").problems_left == 0
    assert api.profile("demo_busy_leader").current_exam is None
