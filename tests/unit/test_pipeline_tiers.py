"""EcoAssistant's hierarchy: the first tier first, one tier up after each rejected attempt (verifier,
schema, grounding, refusal), the last tier sticks; the trace, events and ledger name the tier."""

from __future__ import annotations

import pytest

from chops.llm import LLM, ScriptedLLM
from chops.llm.factory import build_llm
from chops.pipeline.events import Escalate, Execute, Reply, events_of
from chops.settings import MODEL_05B_NAME, MODEL_15B_NAME, Roles, RoleSettings, get_settings, role_tiers
from tests.unit.pipeline_support import call, demo_engine, make_agent, member, to_system, verdict

TIERS = {"classifier": ["small", "large"], "executor": ["small", "large"], "verifier": ["large"]}


@pytest.fixture
def engine(sqlite_url):
    return demo_engine(sqlite_url)


def tiered(engine, **overrides):
    return make_agent(engine, llm=ScriptedLLM(tiers=TIERS), **overrides)


def step_tiers(res, role):
    return [s["tier"] for s in res.trace["steps"] if s["role"] == role and "tier" in s]


def test_first_tier_first_next_after_each_verifier_rejection_and_the_last_sticks(engine):
    agent, llm = tiered(engine)
    for limit, score in ((30, 2), (35, 3), (40, 9)):
        to_system(llm, fresh=limit == 30)
        llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=limit)).enqueue("verifier", verdict(score))
    res = agent.handle("demo_leader", "Set my upload limit to 30, no 35, no: 40", turn_key="t:1")
    assert llm.pending() == {}
    assert step_tiers(res, "executor") == ["small", "large", "large"]
    assert step_tiers(res, "classifier") == ["small"] * 3 + ["large"] * 4  # the gate on iteration 1 only
    assert step_tiers(res, "verifier") == ["large"] * 3  # one tier: it stays there
    assert [e.tier for e in events_of(res.trace, Execute)] == ["small", "large", "large"]
    assert [(e.tier, e.reason) for e in events_of(res.trace, Escalate)] == [(1, "verifier")]  # no tier 2
    assert events_of(res.trace, Reply)[0].tier == "large" and res.trace["tier"] == "large"
    assert [r["tier"] for r in res.trace["ledger"] if r["role"] == "executor"] == ["small", "large", "large"]
    assert res.committed and member(engine, "demo_leader")["limit"] == 40


def test_the_accepted_answer_of_the_first_tier_is_recorded_as_its_own(engine):
    agent, llm = tiered(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="t:2")
    assert res.trace["tier"] == "small" and events_of(res.trace, Escalate) == []


def test_an_ungrounded_value_moves_up_without_asking_the_verifier(engine):
    agent, llm = tiered(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=50))  # the user said 40
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="t:3")
    assert llm.pending() == {}
    assert [(e.tier, e.check) for e in events_of(res.trace, Execute)] == [("small", "grounding"), ("large", None)]
    assert [e.reason for e in events_of(res.trace, Escalate)] == ["grounding"]
    assert len([s for s in res.trace["steps"] if s["role"] == "verifier"]) == 1
    assert "values the sender never wrote (Limit)" in "\n".join(c for _, c in llm.calls[-2][1])  # feedback
    assert res.committed and member(engine, "demo_leader")["limit"] == 40


def test_a_refusal_of_the_cheap_tier_is_tried_again_one_tier_up_then_judged(engine):
    agent, llm = tiered(engine)
    for _ in range(2):
        to_system(llm)
        llm.enqueue("executor", call("ChangeAllTypesMarkingSubject", SubjectIndex=12))
    llm.enqueue("verifier", verdict(9, "Changes the subject to 12 as asked; the platform refuses it."))
    res = agent.handle("demo_leader", "let me grade problem 12", turn_key="t:4")
    assert llm.pending() == {}
    assert [(e.tier, e.check) for e in events_of(res.trace, Execute)] == [("small", "refusal"), ("large", "refusal")]
    assert res.outcome == "refused_invalid_arg" and not res.committed and res.trace["tier"] == "large"


def test_a_reply_twice_invalid_for_its_schema_moves_up(engine):
    agent, llm = tiered(engine)
    to_system(llm)
    llm.enqueue("executor", "not json").enqueue("executor", "still not json")
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="t:5")
    assert [e.reason for e in events_of(res.trace, Escalate)] == ["schema"]
    assert res.iterations == 2 and res.committed


def test_at_the_last_tier_a_schema_error_still_fails_the_attempt(engine):
    agent, llm = tiered(engine, max_iterations=1)
    to_system(llm)
    llm.enqueue("executor", "not json").enqueue("executor", "still not json")
    result = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="t:6")
    assert result.operation is None and "couldn't find an answer" in result.reply and llm.pending() == {}


def test_without_tiers_a_failed_check_is_judged_by_the_verifier_as_before(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=50)).enqueue("verifier", verdict(2))
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="t:7")
    assert len([s for s in res.trace["steps"] if s["role"] == "verifier"]) == 2
    assert events_of(res.trace, Escalate) == [] and res.trace["tier"] is None
    assert all("tier" not in s or s["tier"] is None for s in res.trace["steps"])


# --- settings and the factory ---------------------------------------------------------------------

def test_tiers_come_from_a_comma_separated_variable(monkeypatch):
    monkeypatch.setenv("CHOPS_ROLES__EXECUTOR__TIERS", "local-0.5b,local-1.5b")
    monkeypatch.setenv("CHOPS_MODELS__BIG__PROVIDER", "openai")
    monkeypatch.setenv("CHOPS_MODELS__BIG__MODEL", "gpt-4-0125-preview")
    s = get_settings()
    tiers = role_tiers(s, "executor")
    assert [(n, rs.model, rs.max_tokens) for n, rs in tiers] == [
        ("local-0.5b", MODEL_05B_NAME, 384), ("local-1.5b", MODEL_15B_NAME, 384)]  # the role's own caps stay
    assert role_tiers(s, "verifier") == [(MODEL_15B_NAME, s.roles.verifier)]  # no tiers: its one model
    s2 = s.model_copy(update={"roles": Roles(executor=RoleSettings(tiers=["local-0.5b", "BIG"]))})
    assert role_tiers(s2, "executor")[1][1].provider == "openai"
    with pytest.raises(KeyError, match="unknown tier model 'huge'"):
        role_tiers(s.model_copy(update={"roles": Roles(executor=RoleSettings(tiers=["huge"]))}), "executor")


def test_each_local_model_gets_its_own_engine_and_nothing_starts(tmp_path):
    s = get_settings(data_dir=tmp_path, roles=Roles(classifier=RoleSettings(tiers=["local-0.5b", "local-1.5b"]),
                                                    executor=RoleSettings(tiers=["local-0.5b", "local-1.5b"])))
    llm = build_llm(s)
    small, large = llm.provider("executor", 0).engine, llm.provider("executor", 1).engine
    assert small is not large and small.config.path == s.small_model_path and large.config.path == s.model_path
    assert llm.provider("classifier", 0).engine is small and llm.provider("verifier").engine is large
    assert llm.provider("executor", 7).engine is large  # past the last tier: the last
    assert (llm.tier_name("executor", 0), llm.tier_name("executor", 5), llm.tier_name("verifier")) == (
        "local-0.5b", "local-1.5b", None)
    assert not small.started and not large.started


class _Warmable:
    name, model, prices = "fake", "fake", (0.0, 0.0)

    def __init__(self):
        self.warmed = []

    def warm(self, system):
        self.warmed.append(system)


def test_warming_a_role_warms_every_tier_of_it():
    a, b = _Warmable(), _Warmable()
    llm = LLM({"executor": a}, tiers={"executor": [("small", a), ("large", b)]})
    assert llm.warm("executor", "HEAD") and a.warmed == ["HEAD"] and b.warmed == ["HEAD"]
