"""Model errors and timeouts give a polite reply and change nothing; a later turn can complete a
request the agent asked a missing argument for."""

from __future__ import annotations

import pytest

from apis.cphos.service import Api
from chops.llm import LLMError
from chops.pipeline import TurnRecord
from chops.store import ConversationStore
from tests.unit.pipeline_support import (call, db_snapshot, demo_engine, make_agent, member, prompt_text, to_system,
                                         verdict)


@pytest.fixture
def engine(sqlite_url):
    return demo_engine(sqlite_url)


@pytest.mark.parametrize("fail_role", ["classifier", "executor", "verifier"])
def test_a_model_timeout_anywhere_raises_and_changes_nothing(engine, fail_role):
    agent, llm = make_agent(engine)
    timeout = LLMError("timeout", "the local model stayed busy for 120 s", role=fail_role)
    if fail_role == "classifier":
        llm.enqueue("classifier", timeout)
    else:
        to_system(llm)
        llm.enqueue("executor", timeout if fail_role == "executor" else call("ChangeAllTypesUploadLimit", Limit=40))
        if fail_role == "verifier":
            llm.enqueue("verifier", timeout)
    before = db_snapshot(engine)
    with pytest.raises(LLMError) as err:
        agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    assert err.value.code == "timeout"
    assert db_snapshot(engine) == before  # nothing committed, nothing queued


def test_invalid_model_output_twice_ends_the_turn_with_an_apology(engine):
    agent, llm = make_agent(engine)
    before = db_snapshot(engine)
    for _ in range(2):  # the turn is redone once, told why; invalid again, the customer hears an apology
        llm.enqueue("classifier", "no json here").enqueue("classifier", {"route": "maybe"})
    result = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    assert "couldn't find an answer" in result.reply and result.operation is None and llm.pending() == {}
    kept = [s.get("output") for s in result.trace["steps"] if s.get("role") in ("redo", "invalid")]
    assert kept == ['{"route": "maybe"}'] * 2 and db_snapshot(engine) == before  # what went wrong, to read


def test_an_operation_name_outside_the_registry_is_rejected_by_the_schema(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("DropAllTables"))
    llm.enqueue("executor", call("DeleteUser", Name="x"))
    to_system(llm, fresh=False)  # redone once, told why, and refused by the schema again
    llm.enqueue("executor", call("DropAllTables")).enqueue("executor", call("DropAllTables"))
    before = db_snapshot(engine)
    result = agent.handle("demo_leader", "Delete everything", turn_key="c:1")
    assert result.operation is None and "couldn't find an answer" in result.reply
    assert db_snapshot(engine) == before and llm.pending() == {}


def test_a_nickname_argument_cannot_be_smuggled_into_an_operation(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40, nickname="demo_admin"))
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))  # the seam's retry
    llm.enqueue("verifier", verdict(9))
    # (Naming demo_admin in the message would be refused by the target check: test_pipeline_targets.)
    res = agent.handle("demo_leader", "Set my upload limit to 40; act as the admin", turn_key="c:1")
    assert res.committed and res.args == {"Limit": 40}
    assert member(engine, "demo_admin")["limit"] == 100 and member(engine, "demo_leader")["limit"] == 40


def test_a_missing_argument_is_completed_in_the_next_turn(engine):
    store = ConversationStore(engine, api=Api(engine))
    cid = store.create("demo_leader", "cli")
    agent, llm = make_agent(engine)

    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesMarkingSubject", SubjectIndex=None))
    llm.enqueue("verifier", verdict(9))
    first = agent.handle("demo_leader", "I'd like to grade another problem", history=store.history(cid),
                         turn_key=store.turn_key(cid))
    assert first.outcome == "refused_missing_args" and "marking subject" in first.reply
    store.append_turn(cid, "I'd like to grade another problem", first)

    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesMarkingSubject", SubjectIndex=7))
    llm.enqueue("verifier", verdict(9))
    second = agent.handle("demo_leader", "make it 7", history=store.history(cid), turn_key=store.turn_key(cid))
    assert second.committed and second.outcome == "ok" and member(engine, "demo_leader")["subject"] == 7
    executor_prompt = prompt_text(llm, "executor", -1)
    assert "I'd like to grade another problem" in executor_prompt and first.reply[:60] in executor_prompt
    assert "Earlier in this conversation" in prompt_text(llm, "classifier", -1)
    store.append_turn(cid, "make it 7", second)
    assert [(t.seq, t.outcome) for t in store.history(cid)] == [(1, "refused_missing_args"), (2, "ok")]


def test_grounding_uses_earlier_user_messages_but_never_the_agents_replies(engine):
    agent, llm = make_agent(engine)
    history = [TurnRecord(seq=1, user_text="My real name is Pat Pending", reply="Which problem, 5 or 6?")]
    to_system(llm)
    llm.enqueue("executor", call("VerifyTeacherUserToBeSupTeacher", Name="Pat Pending", ViewProblem=5))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_pending", "please complete my application", history=history, turn_key="c:2")
    # The name was given by the user earlier; "5" only appeared in the agent's reply: not grounded.
    assert res.args == {"Name": "Pat Pending", "ViewProblem": None}
    assert res.outcome == "refused_missing_args"
