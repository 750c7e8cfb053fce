"""Operations and the Api's checks on the in-memory unit of work (no database)."""

from __future__ import annotations

import pytest

from apis.cphos.registry import OPERATIONS
from apis.cphos.service import Api
from chops.domain.outcomes import Outcome
from tests.fakes import FakeState


def _member(id_, nickname, user_name, type_=1, status=1, school=1, subject=1, limit=10, p_id=0):
    return {"id": id_, "p_id": p_id, "user_name": user_name, "school_id": school, "subject": subject,
            "status": status, "type": type_, "limit": limit, "create_time": 0, "nickname": nickname}


@pytest.fixture
def state() -> FakeState:
    return FakeState(
        members=[_member(1, "admin", "Ada"), _member(2, "lead", "Leo"), _member(3, "busy", "Bea", subject=3),
                 _member(4, "vice", "Vic", type_=3, p_id=2), _member(5, "pend", "Pam", status=0),
                 _member(6, "arb", "Art", type_=2)],
        schools=[{"id": 1, "area": 1, "school_name": "North"}, {"id": 2, "area": 2, "school_name": "South"}],
        areas=[{"id": 1, "area_name": "A1"}, {"id": 2, "area_name": "A2"}],
        admins={1}, problems_left={3: 4, 6: 2})


@pytest.fixture
def api(state) -> Api:
    return Api(None, uow_factory=state.uow)


def effects(result):
    return sorted(c.effect() for c in result.diff)


@pytest.mark.parametrize("name,nick,args,outcome,effect", [
    ("ChangeAllTypesMarkingSubject", "lead", {"SubjectIndex": 7}, Outcome.OK, ["cmf_tp_member[id=2].subject=7"]),
    ("ChangeAllTypesMarkingSubject", "lead", {"SubjectIndex": 1}, Outcome.OK_NOOP, []),
    ("ChangeAllTypesMarkingSubject", "busy", {"SubjectIndex": 7}, Outcome.REFUSED_PRECONDITION, []),
    ("ChangeAllTypesMarkingSubject", "arb", {"SubjectIndex": 7}, Outcome.OK, ["cmf_tp_member[id=6].subject=7"]),
    ("ChangeAllTypesMarkingSubject", "lead", {"SubjectIndex": 0}, Outcome.REFUSED_INVALID_ARG, []),
    ("ChangeAllTypesMarkingSubject", "lead", {"SubjectIndex": None}, Outcome.REFUSED_MISSING_ARGS, []),
    ("ChangeAllTypesMarkingSubject", "ghost", {"SubjectIndex": 7}, Outcome.NOT_IN_SYSTEM, []),
    ("ChangeAllTypesMarkingSubject", "pend", {"SubjectIndex": 7}, Outcome.REFUSED_PERMISSION, []),
    ("VerifyTeacherUserToBeSupTeacher", "pend", {"Name": "Pamela", "ViewProblem": 4}, Outcome.OK,
     ["cmf_tp_member[id=5].limit=1", "cmf_tp_member[id=5].school_id=3", "cmf_tp_member[id=5].status=1",
      "cmf_tp_member[id=5].subject=4", "cmf_tp_member[id=5].user_name=Pamela"]),
    ("VerifyTeacherUserToBeSupTeacher", "lead", {"Name": "Leo", "ViewProblem": 4}, Outcome.OK_NOOP, []),
    ("VerifyTeacherUserToBeSupTeacher", "pend", {"Name": "Pamela"}, Outcome.REFUSED_MISSING_ARGS, []),
    ("VerifyTeacherUserToBeSupTeacher", "pend", {"Name": "Pamela", "ViewProblem": 11}, Outcome.REFUSED_INVALID_ARG, []),
    ("MakeAllTypesToBeArbiter", "lead", {}, Outcome.OK, ["cmf_tp_member[id=2].type=2"]),
    ("MakeAllTypesToBeArbiter", "vice", {}, Outcome.OK, ["cmf_tp_member[id=4].p_id=0", "cmf_tp_member[id=4].type=2"]),
    ("MakeAllTypesToBeArbiter", "arb", {}, Outcome.OK_NOOP, []),
    ("MakeAllTypesToBeArbiter", "busy", {}, Outcome.REFUSED_PRECONDITION, []),
    ("MakeAllTypesToBeSupTeacher", "busy", {}, Outcome.OK_NOOP, []),
    ("MakeAllTypesToBeSupTeacher", "arb", {}, Outcome.OK, ["cmf_tp_member[id=6].type=1"]),
    ("MakeAllTypesToBeSubCoach", "arb", {"TeamLeaderName": "Leo"}, Outcome.OK,
     ["cmf_tp_member[id=6].p_id=2", "cmf_tp_member[id=6].type=3"]),
    ("MakeAllTypesToBeSubCoach", "vice", {"TeamLeaderName": "Leo"}, Outcome.OK_NOOP, []),
    ("MakeAllTypesToBeSubCoach", "busy", {"TeamLeaderName": "Leo"}, Outcome.REFUSED_PRECONDITION, []),
    ("MakeAllTypesToBeSubCoach", "lead", {"TeamLeaderName": "Leo"}, Outcome.REFUSED_INVALID_ARG, []),
    ("MakeAllTypesToBeSubCoach", "lead", {"TeamLeaderName": "Vic"}, Outcome.REFUSED_INVALID_ARG, []),
    ("MakeAllTypesToBeSubCoach", "lead", {"TeamLeaderName": "Pam"}, Outcome.REFUSED_INVALID_ARG, []),
    ("ChangeAllTypesUploadLimit", "lead", {"Limit": 200}, Outcome.OK, ["cmf_tp_member[id=2].limit=200"]),
    ("ChangeAllTypesUploadLimit", "lead", {"Limit": 201}, Outcome.REFUSED_INVALID_ARG, []),
    ("ChangeAllTypesUploadLimit", "lead", {"Limit": True}, Outcome.REFUSED_INVALID_ARG, []),
    ("ChangeAllTypesSchool", "lead", {"SchoolName": "South"}, Outcome.OK, ["cmf_tp_member[id=2].school_id=2"]),
    ("ChangeAllTypesSchool", "lead", {"SchoolName": "Nowhere"}, Outcome.REFUSED_INVALID_ARG, []),
    ("ChangeAllTypesSchool", "lead", {"SchoolName": "  "}, Outcome.REFUSED_MISSING_ARGS, []),
    ("AddNewSchoolByName", "admin", {"SchoolName": "East", "AreaName": "A2"}, Outcome.OK,
     ["cmf_tp_school+{id=3,area=2,school_name=East}"]),
    ("AddNewSchoolByName", "admin", {"SchoolName": "South", "AreaName": "A2"}, Outcome.OK_NOOP, []),
    ("AddNewSchoolByName", "admin", {"SchoolName": "South", "AreaName": "A1"}, Outcome.REFUSED_INVALID_ARG, []),
    ("AddNewSchoolByName", "admin", {"SchoolName": "East", "AreaName": "Mars"}, Outcome.REFUSED_INVALID_ARG, []),
    ("AddNewSchoolByName", "lead", {"SchoolName": "East", "AreaName": "A2"}, Outcome.REFUSED_PERMISSION, []),
    ("GetTeacherInfoByName", "lead", {"TeacherName": "Leo"}, Outcome.REFUSED_PERMISSION, []),
    ("GetTeacherInfoBySchoolName", "admin", {}, Outcome.REFUSED_MISSING_ARGS, []),
    ("NoSuchOperation", "admin", {}, Outcome.REFUSED_INVALID_ARG, []),
])
def test_outcomes_and_diffs(api, state, name, nick, args, outcome, effect):
    before = [dict(m) for m in state.members], [dict(s) for s in state.schools]
    dry = api.call(name, nick, args, dry_run=True)
    assert (dry.outcome, effects(dry)) == (outcome, effect), dry.message
    assert ([dict(m) for m in state.members], [dict(s) for s in state.schools]) == before  # dry run rolled back
    real = api.call(name, nick, args)
    assert (real.outcome, effects(real)) == (outcome, effect)
    op = OPERATIONS.get(name)
    assert real.committed == bool(outcome.succeeded and op and op.writes)
    assert real.message


def test_reads_return_data(api):
    res = api.call("GetTeacherInfoByName", "admin", {"TeacherName": "Vic"})
    assert res.outcome == Outcome.OK
    assert [(r["id"], r["role"], r["team_leader_name"], r["school_name"], r["area_name"]) for r in res.data] == \
        [(4, "vice team leader", "Leo", "North", "A1")]
    assert api.call("GetTeacherInfoByName", "admin", {"TeacherName": "Pam"}).data == []  # pending: not listed
    by_school = api.call("GetTeacherInfoBySchoolName", "admin", {"SchoolName": "North"})
    assert [r["id"] for r in by_school.data] == [1, 2, 3, 4, 6]
    assert api.call("GetTeacherInfoBySchoolName", "admin", {"SchoolName": "Moon"}).data == []


def test_acting_user_cannot_come_from_arguments(api, state):
    res = api.call("ChangeAllTypesUploadLimit", "lead", {"Limit": 5, "nickname": "admin"})
    assert res.outcome == Outcome.REFUSED_INVALID_ARG
    assert "acting user" in res.message
    assert state.members[0]["limit"] == 10 and state.members[1]["limit"] == 10


def test_committed_write_is_audited_and_replayed(api, state):
    first = api.call("ChangeAllTypesUploadLimit", "lead", {"Limit": 42}, idempotency_key="k")
    assert first.committed and not first.replayed
    state.members[1]["limit"] = 7  # a later change: a replay must not write again
    again = api.call("ChangeAllTypesUploadLimit", "lead", {"Limit": 42}, idempotency_key="k")
    assert again.replayed and again.diff == first.diff and state.members[1]["limit"] == 7
    assert len(state.audit) == 1 and state.audit[0]["outcome"] == "ok" and state.audit[0]["user_id"] == 2
    other = api.call("ChangeAllTypesUploadLimit", "lead", {"Limit": 43}, idempotency_key="k")
    assert other.outcome == Outcome.REFUSED_INVALID_ARG and state.members[1]["limit"] == 7


def test_refusals_and_dry_runs_write_no_audit(api, state):
    api.call("ChangeAllTypesUploadLimit", "lead", {"Limit": 500}, idempotency_key="a")
    api.call("ChangeAllTypesUploadLimit", "lead", {"Limit": 50}, dry_run=True, idempotency_key="b")
    assert state.audit == [] and state.commits == 0


def test_duplicate_nickname_is_refused(api, state):
    state.members.append(_member(9, "lead", "Leo Two"))
    assert api.call("ChangeAllTypesUploadLimit", "lead", {"Limit": 5}).outcome == Outcome.REFUSED_PRECONDITION


def test_a_staff_actor_is_audited_with_the_write_but_the_write_acts_as_the_user(api, state):
    res = api.call("ChangeAllTypesUploadLimit", "lead", {"Limit": 41}, idempotency_key="s", staff="sam")
    assert res.committed and state.members[1]["limit"] == 41 and state.members[0]["limit"] == 10
    assert (state.audit[0]["nickname"], state.audit[0]["actor"]) == ("lead", "sam")
    refused = api.call("AddNewSchoolByName", "lead", {"SchoolName": "East", "AreaName": "A1"},
                       idempotency_key="t", staff="sam")
    assert refused.outcome == Outcome.REFUSED_PERMISSION  # the user's rights, not the staff member's
