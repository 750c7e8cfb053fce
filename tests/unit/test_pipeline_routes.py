"""Every route of the agent with a scripted model over the real demo database."""

from __future__ import annotations

import pytest

from chops.llm import ScriptExhausted
from tests.unit.pipeline_support import (audit_rows, call, db_snapshot, demo_engine, make_agent, prompt_text,
                                         single_call, to_guide, to_profile, to_system, verdict)


@pytest.fixture
def engine(sqlite_url):
    return demo_engine(sqlite_url)


def test_not_in_system_gets_an_honest_reply_without_any_model_call_or_operation(engine):
    agent, llm = make_agent(engine)  # nothing scripted: any model call would raise ScriptExhausted
    before = db_snapshot(engine)
    res = agent.handle("nobody_here", "Please change my upload limit to 40.", turn_key="c:1")
    assert res.route == "not_in_system"
    assert "cannot find you" in res.reply and "human support" in res.reply
    assert res.operation is None and res.outcome is None and not res.committed
    assert llm.calls == [] and res.chars_in == 0 and res.iterations == 0
    assert db_snapshot(engine) == before


def test_basic_info_route_answers_from_the_profile(engine):
    agent, llm = make_agent(engine)
    to_profile(llm)
    llm.enqueue("executor", {"answer": "You have 3 problems left to mark."})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_busy_leader", "How many papers do I still have to grade?", turn_key="c:1")
    assert res.route == "basic_info" and res.reply == "You have 3 problems left to mark."
    assert res.iterations == 1 and res.operation is None
    # The executor saw the real profile from the database; the gate and one classifier level ran.
    assert "Problems left to mark in the current exam: 3" in prompt_text(llm, "executor")
    assert [c[2].__name__ for c in llm.calls] == ["SmallTalkGate", "Level1Decision", "ProfileAnswer", "Verdict"]
    assert "Problems left to mark in the current exam: 3" in prompt_text(llm, "verifier")


def test_guide_route_answers_from_long_chunks_and_cites_file_and_page(engine):
    agent, llm = make_agent(engine)
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": "No: uploads close at the deadline."})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "Can I still send papers after the closing date?", turn_key="c:1")
    assert res.route == "guide"
    assert res.reply == "No: uploads close at the deadline. (Source: user-guide.pdf, page 3)"
    assert "[1] user-guide.pdf, page 3" in prompt_text(llm, "executor")
    assert "Guide excerpts" not in prompt_text(llm, "classifier", 2)  # classifier_chunks is off by default
    assert "late sheets are not accepted" in prompt_text(llm, "verifier")  # the cited excerpt is evidence
    retrieved = [s for s in res.trace["steps"] if s["role"] == "retrieve"]
    assert [s["size"] for s in retrieved] == ["long"]
    assert retrieved[0]["chunks"][0] == {"file": "user-guide.pdf", "page": 3, "score": 0.81,
                                         "text": retrieved[0]["chunks"][0]["text"]}


def test_level_two_sees_short_chunks_when_classifier_chunks_is_on(engine):
    agent, llm = make_agent(engine, classifier_chunks=True, k_short=1)
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": "No."}).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "Can I still send papers after the closing date?", turn_key="c:1")
    level2 = prompt_text(llm, "classifier", 2)  # after the small-talk gate and level 1
    assert "Guide excerpts:\n[1] user-guide.pdf, page 3" in level2 and "[2]" not in level2
    assert agent.retriever.index.queries[0] == ("Can I still send papers after the closing date?", 1, "short")
    assert [s["size"] for s in res.trace["steps"] if s["role"] == "retrieve"] == ["short", "long"]


def test_guide_answer_without_a_source_has_no_citation(engine):
    agent, llm = make_agent(engine)
    to_guide(llm)
    llm.enqueue("executor", {"source": 0, "answer": "The guides do not cover this; please contact human support."})
    res = agent.handle("demo_leader", "What is the weather tomorrow?", turn_key="c:1")
    # Nothing cited, nothing of the profile said: the honest "no answer found", not verified.
    assert "couldn't find an answer" in res.reply and "[" not in res.reply
    assert llm.pending() == {}


def test_read_operation_runs_for_real_and_the_reply_lists_the_rows(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("GetTeacherInfoByName", TeacherName="Lena Leader."))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_admin", "Show me what you know about Lena Leader", turn_key="c:1")
    assert res.route == "system" and res.operation == "GetTeacherInfoByName"
    assert res.args == {"TeacherName": "Lena Leader"}  # grounded, trailing punctuation trimmed
    assert res.outcome == "ok" and not res.committed
    assert "Lena Leader" in res.reply
    assert audit_rows(engine) == []  # a read is not a commit
    assert "Data:" in prompt_text(llm, "verifier")


def test_read_refused_for_a_non_admin_is_reported(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("GetTeacherInfoBySchoolName", SchoolName="Lakeside Academy"))
    llm.enqueue("verifier", verdict(9, "right operation; the refusal is correct"))
    res = agent.handle("demo_leader", "Who works at Lakeside Academy?", turn_key="c:1")
    assert res.outcome == "refused_permission"
    assert res.reply.startswith("I couldn't do that:") and "admin" in res.reply


def test_progress_events_come_in_pipeline_order(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", verdict(9))
    events = []
    agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1",
                 on_event=lambda name, payload: events.append((name, payload)))
    assert [e[0] for e in events] == ["classify", "execute", "verify", "commit", "reply"]
    assert events[0][1]["route"] == "system" and events[2][1]["passed"] is True
    assert events[3][1]["committed"] is True


def test_a_failing_event_listener_does_not_break_the_turn(engine):
    agent, llm = make_agent(engine)
    to_profile(llm)
    llm.enqueue("executor", {"answer": "You are a team leader."}).enqueue("verifier", verdict(9))

    def boom(name, payload):
        raise RuntimeError("listener bug")

    res = agent.handle("demo_leader", "What is my role?", turn_key="c:1", on_event=boom)
    assert res.reply == "You are a team leader."


def test_trace_records_every_step_with_sizes(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    model_steps = [s for s in res.trace["steps"] if s["role"] in ("classifier", "executor", "verifier")]
    assert [s["role"] for s in model_steps] == ["classifier", "classifier", "classifier", "executor", "verifier"]
    assert all(s["prompt_chars"] > 0 and s["completion_chars"] > 0 and s["model"] == "scripted" for s in model_steps)
    assert res.chars_in == sum(s["prompt_chars"] for s in model_steps)
    assert res.chars_out == sum(s["completion_chars"] for s in model_steps)
    verify = model_steps[-1]
    assert verify["score"] == 9 and verify["threshold"] == 8.0
    execute = model_steps[3]
    assert execute["operation"] == "ChangeAllTypesUploadLimit" and execute["dry_run"] is True
    assert execute["diff"][0]["field"] == "limit" and execute["diff"][0]["after"] == 40
    commit = next(s for s in res.trace["steps"] if s["role"] == "commit")
    assert commit["committed"] is True
    assert res.trace["totals"]["calls"] == 5 and len(res.trace["ledger"]) == 5


# --- architectures --------------------------------------------------------------------------

def test_executor_only_answers_or_operates_in_one_call_without_classifier_or_verifier(engine):
    agent, llm = make_agent(engine, architecture="executor_only")
    llm.enqueue("executor", {"call": {"operation": "AnswerDirectly", "answer": "You are a team leader."}})
    res = agent.handle("demo_leader", "What is my role?", turn_key="c:1")
    assert res.reply == "You are a team leader." and res.route == "guide"
    llm.enqueue("executor", single_call("ChangeAllTypesUploadLimit", Limit=40))
    before = db_snapshot(engine)
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:2")
    # No verifier, so the write is never committed: staff approve it (the dry run said it would work).
    assert res.route == "system" and res.queued and not res.committed and res.outcome == "ok"
    after = db_snapshot(engine)
    assert after["members"] == before["members"] and after["approvals"] == before["approvals"] + 1
    assert {c[0] for c in llm.calls} == {"executor"}
    assert "Profile:" in prompt_text(llm, "executor", 0) or "profile" in prompt_text(llm, "executor", 0)


def test_ce_1level_uses_one_three_way_classifier_and_no_verifier(engine):
    agent, llm = make_agent(engine, architecture="ce_1level")
    llm.enqueue("classifier", {"route": "do_operation"})
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    before = db_snapshot(engine)
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    assert res.queued and not res.committed and [c[0] for c in llm.calls] == ["classifier", "executor"]
    assert db_snapshot(engine)["members"] == before["members"]
    assert res.trace["steps"][-1]["reason"] == "unverified"
    assert llm.calls[0][2].__name__ == "OneLevelDecision"


def test_cev_1level_verifies_with_the_one_level_classifier(engine):
    agent, llm = make_agent(engine, architecture="cev_1level")
    llm.enqueue("classifier", {"route": "own_fact"})
    llm.enqueue("executor", {"answer": "You are a team leader."})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "What is my role?", turn_key="c:1")
    assert res.route == "basic_info" and [c[0] for c in llm.calls] == ["classifier", "executor", "verifier"]


def test_an_unexpected_extra_call_fails_loudly(engine):
    agent, llm = make_agent(engine)
    llm.enqueue("classifier", {"route": "own_fact"})
    with pytest.raises(ScriptExhausted):
        agent.handle("demo_leader", "What is my role?", turn_key="c:1")
