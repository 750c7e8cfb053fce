"""``Api.call_plan`` on the in-memory unit of work: several writes in one transaction, all or nothing,
one idempotency key for the whole plan."""

from __future__ import annotations

import copy

import pytest

from apis.cphos.service import Api
from chops.domain.outcomes import Outcome
from tests.fakes import FakeState
from tests.unit.test_apis_operations import _member

LIMIT = ("ChangeAllTypesUploadLimit", {"Limit": 40})
SUBJECT = ("ChangeAllTypesMarkingSubject", {"SubjectIndex": 7})


@pytest.fixture
def state() -> FakeState:
    return FakeState(members=[_member(1, "lead", "Leo", limit=10, subject=1),
                              _member(2, "arb", "Art", type_=2, subject=2)],
                     schools=[{"id": 1, "area": 1, "school_name": "North"}],
                     areas=[{"id": 1, "area_name": "A1"}], problems_left={2: 2})


@pytest.fixture
def api(state) -> Api:
    return Api(None, uow_factory=state.uow)


def row(state, nickname):
    return next(m for m in state.members if m["nickname"] == nickname)


def test_a_dry_run_reports_every_step_and_changes_nothing(api, state):
    before = copy.deepcopy(state.members)
    res = api.call_plan("lead", [LIMIT, SUBJECT], dry_run=True)
    assert [s.outcome for s in res.steps] == [Outcome.OK, Outcome.OK]
    assert res.outcome == Outcome.OK and res.dry_run and not res.committed
    assert [c.effect() for c in res.diff] == ["cmf_tp_member[id=1].limit=40", "cmf_tp_member[id=1].subject=7"]
    assert state.members == before and state.audit == [] and state.commits == 0


def test_a_dry_run_goes_on_past_a_refused_step(api):
    res = api.call_plan("lead", [("ChangeAllTypesUploadLimit", {"Limit": 500}), SUBJECT], dry_run=True)
    assert [s.outcome for s in res.steps] == [Outcome.REFUSED_INVALID_ARG, Outcome.OK]
    assert res.outcome == Outcome.REFUSED_INVALID_ARG  # the plan as a whole is not doable as asked
    assert [c.effect() for c in res.steps[1].diff] == ["cmf_tp_member[id=1].subject=7"]


def test_a_real_run_commits_every_step_at_once_with_one_key(api, state):
    res = api.call_plan("lead", [LIMIT, SUBJECT], idempotency_key="k1", request_id="r1")
    assert res.committed and res.outcome == Outcome.OK and all(s.committed for s in res.steps)
    assert (row(state, "lead")["limit"], row(state, "lead")["subject"]) == (40, 7)
    assert state.commits == 1  # one transaction
    assert [(a["idempotency_key"], a["operation"], a["outcome"], a["user_id"]) for a in state.audit] == [
        ("k1", "ChangeAllTypesUploadLimit", "ok", 1), ("k1#2", "ChangeAllTypesMarkingSubject", "ok", 1)]


def test_a_later_step_sees_the_earlier_steps_effect(api, state):
    # An arbiter may change subject with marking left; once made a team leader in step 1, they may not.
    plan = [("MakeAllTypesToBeSupTeacher", {}), ("ChangeAllTypesMarkingSubject", {"SubjectIndex": 5})]
    dry = api.call_plan("arb", plan, dry_run=True)
    assert [s.outcome for s in dry.steps] == [Outcome.OK, Outcome.REFUSED_PRECONDITION]
    alone = api.call("ChangeAllTypesMarkingSubject", "arb", {"SubjectIndex": 5}, dry_run=True)
    assert alone.outcome == Outcome.OK


def test_a_step_refused_at_commit_leaves_nothing_committed(api, state):
    before = copy.deepcopy(state.members)
    plan = [("MakeAllTypesToBeSupTeacher", {}), ("ChangeAllTypesMarkingSubject", {"SubjectIndex": 5})]
    res = api.call_plan("arb", plan, idempotency_key="k2")
    assert not res.committed and res.outcome == Outcome.REFUSED_PRECONDITION
    assert [s.outcome for s in res.steps] == [Outcome.OK, Outcome.REFUSED_PRECONDITION]
    assert not any(s.committed for s in res.steps)
    assert state.members == before and state.audit == [] and state.commits == 0


def test_the_same_key_replays_the_whole_plan_and_never_writes_twice(api, state):
    first = api.call_plan("lead", [LIMIT, SUBJECT], idempotency_key="k3")
    again = api.call_plan("lead", [LIMIT, SUBJECT], idempotency_key="k3")
    assert again.replayed and not first.replayed and again.committed
    assert [s.model_dump(exclude={"replayed"}) for s in again.steps] == \
        [s.model_dump(exclude={"replayed"}) for s in first.steps]
    assert state.commits == 1 and len(state.audit) == 2


@pytest.mark.parametrize("other", [
    [LIMIT],  # the key's plan had two steps: a one-step request is a different one
    [LIMIT, ("ChangeAllTypesMarkingSubject", {"SubjectIndex": 8})],
    [SUBJECT, LIMIT],  # the order is part of the request
])
def test_the_same_key_for_a_different_plan_is_refused(api, state, other):
    api.call_plan("lead", [LIMIT, SUBJECT], idempotency_key="k4")
    res = api.call_plan("lead", other, idempotency_key="k4")
    assert res.outcome == Outcome.REFUSED_INVALID_ARG and "already used" in res.message
    assert state.commits == 1 and row(state, "lead")["subject"] == 7


def test_a_single_call_is_a_one_step_plan_with_the_same_audit_row(api, state):
    api.call(LIMIT[0], "lead", LIMIT[1], idempotency_key="k5")
    assert [a["idempotency_key"] for a in state.audit] == ["k5"]
    plan = api.call_plan("lead", [LIMIT], idempotency_key="k5")
    assert plan.replayed and plan.steps[0].outcome == Outcome.OK


@pytest.mark.parametrize("steps,problem", [
    ([], "1 to 5 steps"),
    ([LIMIT, SUBJECT, LIMIT, SUBJECT, LIMIT, SUBJECT], "1 to 5 steps"),
    ([("GetTeacherInfoByName", {"TeacherName": "Leo"})], "only reads"),
    ([("DropEverything", {})], "Unknown operation"),
])
def test_what_is_not_a_plan_is_refused_without_running(api, state, steps, problem):
    res = api.call_plan("lead", steps, idempotency_key="k6")
    assert res.outcome == Outcome.REFUSED_INVALID_ARG and problem in res.message
    assert state.commits == 0 and state.audit == []
