"""The one conversation service on a real SQLite database with a scripted model."""

from __future__ import annotations

import pytest

from chops.conversation import ConversationService
from chops.llm import LLMError
from chops.store import ConversationStore
from tests.unit.pipeline_support import call, db_snapshot, demo_engine, make_agent, single_call, to_profile, to_system, verdict


@pytest.fixture
def service(sqlite_url):
    engine = demo_engine(sqlite_url)
    agent, llm = make_agent(engine)
    return ConversationService(ConversationStore(engine, api=agent.api), agent), llm, engine


def test_turns_are_stored_in_order_and_the_next_turn_sees_the_history(service):
    svc, llm, engine = service
    cid = svc.start("demo_leader", "cli")
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    first = svc.run_turn(cid, "demo_leader", "Set my upload limit to 40")
    assert (first.seq, first.result.committed) == (1, True)
    to_profile(llm)
    llm.enqueue("executor", {"answer": "It is 40."})
    llm.enqueue("verifier", verdict(9))
    second = svc.run_turn(cid, "demo_leader", "What is my limit now?")
    assert second.seq == 2 and second.turn_id != first.turn_id
    assert "Set my upload limit to 40" in str(llm.calls[-1][1])  # the executor saw the first turn
    assert [(t.seq, t.user_text) for t in svc.store.history(cid)] == [
        (1, "Set my upload limit to 40"), (2, "What is my limit now?")]


def test_a_model_error_raises_and_stores_nothing(service):
    svc, llm, engine = service
    cid = svc.start("demo_leader", "cli")
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", LLMError("timeout", "too slow"))
    before = db_snapshot(engine)
    with pytest.raises(LLMError):
        svc.run_turn(cid, "demo_leader", "Set my upload limit to 40")
    assert db_snapshot(engine) == before and svc.store.history(cid) == []


def test_a_write_without_a_verifier_is_queued_in_the_conversation(sqlite_url):
    engine = demo_engine(sqlite_url)
    agent, llm = make_agent(engine, architecture="executor_only")
    svc = ConversationService(ConversationStore(engine, api=agent.api), agent)
    cid = svc.start("demo_leader", "eval")
    llm.enqueue("executor", single_call("ChangeAllTypesUploadLimit", Limit=40))
    turn = svc.run_turn(cid, "demo_leader", "Set my upload limit to 40")
    assert turn.result.queued and not turn.result.committed
    approval = svc.store.get_approval(turn.result.approval_id)
    assert (approval.status, approval.conversation_id, approval.turn_id) == ("pending", cid, turn.turn_id)


def test_a_staff_note_taking_the_turns_number_meanwhile_moves_the_turn_to_the_next(service):
    from chops.pipeline import TurnResult

    svc, llm, engine = service
    cid = svc.start("demo_leader", "widget")
    real_handle = svc.agent.handle

    def handle_while_staff_write(*args, **kwargs):  # staff append a note while the agent is busy
        svc.store.append_turn(cid, "", TurnResult(reply="Staff: we are looking into it."))
        return real_handle(*args, **kwargs)

    svc.agent.handle = handle_while_staff_write
    to_profile(llm)
    llm.enqueue("executor", {"answer": "You are a team leader."})
    llm.enqueue("verifier", verdict(9))
    turn = svc.run_turn(cid, "demo_leader", "Who am I?")
    assert turn.seq == 2 and [(t.seq, t.user_text) for t in svc.store.history(cid)] == [(1, ""), (2, "Who am I?")]
