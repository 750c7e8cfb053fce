"""Solution memory: written only after a verified (and committed) turn, never a read's data or a profile
answer; recalled above the similarity floor only; a deleted entry never shown again; demonstrations
in the user part of the classifier and executor prompts."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from chops import tables as t
from apis.cphos.service import Api
from chops.memory import SolutionMemory
from chops.pipeline.context import Candidate, Step
from chops.pipeline.demonstrations import solution_of
from chops.pipeline.events import Recall, events_of
from chops.records import Solution
from tests.unit.pipeline_support import (ABOUT_PLATFORM, WordsEmbedder, call, demo_engine, make_agent, plan, prompt_text,
                                         to_guide, to_profile, to_system, verdict)


@pytest.fixture
def engine(sqlite_url):
    return demo_engine(sqlite_url)


@pytest.fixture
def memory(engine):
    return SolutionMemory(engine, WordsEmbedder(), k=2, floor=0.6)


def stored(engine) -> list[dict]:
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.select(t.solution).order_by(t.solution.c.id)).mappings()]


def test_a_verified_committed_write_is_remembered_with_its_operation_and_arguments(engine, memory):
    agent, llm = make_agent(engine, memory=memory)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="m:1")
    [row] = stored(engine)
    assert res.committed and res.trace["remembered"] == row["id"]
    assert (row["request"], row["route"], row["operation"], row["args_json"], row["answer"], row["status"]) == (
        "Set my upload limit to 40", "system", "ChangeAllTypesUploadLimit", '{"Limit": 40}', None, "live")


def test_nothing_is_remembered_from_a_rejected_queued_or_refused_write(engine, memory):
    agent, llm = make_agent(engine, memory=memory, max_iterations=1)
    to_system(llm)  # rejected: the chooser's pick is queued for staff
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(2))
    assert agent.handle("demo_leader", "Set my upload limit to 40", turn_key="m:2").queued
    to_system(llm)  # verified, but the platform refuses it: nothing was done
    llm.enqueue("executor", call("ChangeAllTypesMarkingSubject", SubjectIndex=12)).enqueue("verifier", verdict(9))
    assert agent.handle("demo_leader", "let me grade problem 12", turn_key="m:3").outcome == "refused_invalid_arg"
    assert stored(engine) == []


def test_a_plan_done_only_in_part_is_not_remembered(engine, memory):
    agent, llm = make_agent(engine, memory=memory)
    to_system(llm)  # the limit can change; demo_busy_leader's account state refuses a new marking subject
    llm.enqueue("executor", plan(("ChangeAllTypesUploadLimit", {"Limit": 40}),
                                 ("ChangeAllTypesMarkingSubject", {"SubjectIndex": 4})))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_busy_leader", "upload limit 40 and let me grade problem 4", turn_key="m:9")
    assert res.committed and res.outcome == "partial" and res.error is None
    assert stored(engine) == [] and res.trace.get("remembered") is None
    # decided by the rule (the agent would also swallow an error here, as the turn is done)
    step = Step("ChangeAllTypesUploadLimit", {"Limit": 40}, {"Limit": 40}, writes=True)
    assert solution_of("upload limit 40 and …", Candidate(1, "system", steps=[step]), True, res) is None


def test_a_read_keeps_only_its_operation_and_a_profile_answer_only_its_route(engine, memory):
    agent, llm = make_agent(engine, memory=memory)
    llm.enqueue("classifier", ABOUT_PLATFORM)
    llm.enqueue("classifier", {"route": "something_else"}).enqueue("classifier", {"route": "look_up_people"})
    llm.enqueue("executor", call("GetTeacherInfoByName", TeacherName="Lena Leader")).enqueue("verifier", verdict(9))
    read = agent.handle("demo_admin", "Tell me about the teacher Lena Leader", turn_key="m:4")
    to_profile(llm)
    llm.enqueue("executor", {"answer": "Your upload limit is 20."}).enqueue("verifier", verdict(9))
    agent.handle("demo_leader", "What is my upload limit?", turn_key="m:5")
    rows = stored(engine)
    assert read.outcome == "ok" and len(rows) == 2
    assert [(r["route"], r["operation"], r["args_json"], r["answer"], r["source"]) for r in rows] == [
        ("system", "GetTeacherInfoByName", None, None, None), ("basic_info", None, None, None, None)]
    kept = " ".join(str(r[k]) for r in rows for k in ("operation", "args_json", "answer", "source") if r[k])
    data = Api(engine).call("GetTeacherInfoByName", "demo_admin", {"TeacherName": "Lena Leader"}).data
    assert data and "Lena Leader" not in kept and "upload limit is 20" not in kept
    assert not [v for v in _leaves(data) if len(str(v)) > 3 and str(v) in kept]  # none of the read's data


def _leaves(value):
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


def test_a_guide_answer_keeps_its_answer_and_source(engine, memory):
    agent, llm = make_agent(engine, memory=memory)
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": "Open Papers and press Upload."}).enqueue("verifier", verdict(9))
    agent.handle("demo_leader", "How do I upload answer sheets?", turn_key="m:6")
    [row] = stored(engine)
    assert (row["route"], row["answer"], row["source"]) == (
        "guide", "Open Papers and press Upload.", "user-guide.pdf, page 3")


def test_recall_returns_only_solutions_above_the_floor_best_first(memory):
    a = memory.remember(Solution(request="set my upload limit to 40", route="system",
                                 operation="ChangeAllTypesUploadLimit", args={"Limit": 40}))
    b = memory.remember(Solution(request="please set my upload limit to 55 now", route="system",
                                 operation="ChangeAllTypesUploadLimit", args={"Limit": 55}))
    memory.remember(Solution(request="how do I reset a password", route="guide", answer="Use Reset."))
    got = memory.recall("set my upload limit to 70")
    assert [s.id for s in got] == [a, b] and got[0].similarity >= got[1].similarity >= 0.6
    assert memory.recall("which exam is next") == []  # nothing similar enough
    assert memory.remember(Solution(request="set my upload limit to 40", route="system",
                                    operation="ChangeAllTypesUploadLimit", args={"Limit": 40})) is None  # once


def test_a_deleted_solution_is_never_shown_nor_stored_again(engine, memory):
    sol = Solution(request="set my upload limit to 40", route="system", operation="ChangeAllTypesUploadLimit",
                   args={"Limit": 40})
    sid = memory.remember(sol)
    assert [s.id for s in memory.recall("set my upload limit to 40")] == [sid]
    assert memory.delete(sid, staff="Sam") and not memory.delete(sid, staff="Sam")
    assert memory.recall("set my upload limit to 40") == []
    assert memory.remember(sol) is None and memory.recall("set my upload limit to 40") == []
    assert memory.get(sid).status == "deleted" and memory.get(sid).deleted_by == "Sam"
    # Deleted by another worker (straight in the table): this process's index still holds the vector.
    other = memory.remember(Solution(request="set my upload limit to 41", route="system",
                                     operation="ChangeAllTypesUploadLimit", args={"Limit": 41}))
    assert [s.id for s in memory.recall("set my upload limit to 41")] == [other]
    with engine.begin() as conn:
        conn.execute(t.solution.update().where(t.solution.c.id == other).values(status="deleted"))
    assert memory.recall("set my upload limit to 41") == []


def test_recalled_solutions_are_demonstrations_in_the_user_part_of_classifier_and_executor(engine, memory):
    memory.remember(Solution(request="please set my upload limit to 55", route="system",
                             operation="ChangeAllTypesUploadLimit", args={"Limit": 55}))
    agent, llm = make_agent(engine, memory=memory)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "please set my upload limit to 40", turn_key="m:7")
    classifier_calls = [m for role, m, _ in llm.calls if role == "classifier"][1:]  # after the small-talk gate
    assert '"please set my upload limit to 55" -> something_else' in classifier_calls[0][1][1]
    assert '"please set my upload limit to 55" -> do_operation' in classifier_calls[1][1][1]
    assert all("limit to 55" not in m[0][1] for m in classifier_calls)  # never in the cached system part
    executor = prompt_text(llm, "executor")
    # in the shape of the executor's own reply (a plan, compact as the grammar writes it)
    assert '-> {"calls":[{"operation":"ChangeAllTypesUploadLimit","args":{"Limit":55}}]}' in executor
    assert "limit to 55" not in prompt_text(llm, "verifier")
    [recall] = events_of(res.trace, Recall)
    assert recall.ids == [1] and recall.similarities[0] >= 0.6
    assert next(s for s in res.trace["steps"] if s["role"] == "memory")["demonstrations"] == ["m-1"]


def test_without_a_memory_the_prompts_have_no_demonstrations(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "please set my upload limit to 40", turn_key="m:8")
    assert "handled correctly before" not in prompt_text(llm, "classifier") + prompt_text(llm, "executor")
    assert events_of(res.trace, Recall) == [] and stored(engine) == []
