"""Conversational messages (issue 13, item 7): greetings, thanks, "never mind", asking for a person and
off-topic questions get a short fixed reply in the user's language, with no executor, verifier or write.
The classifier decides (scripted here; the real model's decisions are tested in
tests/integration/test_pipeline_local_model.py and measured by ``python -m bench.classify``)."""

from __future__ import annotations

import pytest

from chops.records import TurnRecord
from tests.unit.pipeline_support import (call, db_snapshot, demo_engine, make_agent, prompt_text, small_talk,
                                         to_system, verdict)

# (level-1 decision, route, a message, words its reply must have)
ROUTES = [("greeting", "greeting", "Good afternoon!", "What can I do for you?"),
          ("greeting", "greeting", "下午好", "有什么可以帮您"),
          ("thanks_or_goodbye", "thanks", "ok thanks, that's everything", "You're welcome"),
          ("thanks_or_goodbye", "thanks", "好的，没别的事了", "不客气"),
          ("cancel_request", "cancel", "leave it, forget what I asked", "dropped that request"),
          ("cancel_request", "cancel", "刚才说的不用办了", "已取消"),
          ("ask_for_person", "handoff", "I'd rather talk to somebody from your team", "a person will reply here"),
          ("ask_for_person", "handoff", "我想跟你们的工作人员说", "工作人员"),
          ("unrelated_to_platform", "out_of_scope", "who painted the Mona Lisa?", "I can only help with this platform"),
          ("unrelated_to_platform", "out_of_scope", "蒙娜丽莎是谁画的？", "只能解答")]


@pytest.fixture
def engine(sqlite_url):
    return demo_engine(sqlite_url)


@pytest.mark.parametrize("decision, route, text, reply_has", ROUTES)
def test_a_conversational_decision_gets_its_fixed_reply_in_the_users_language_and_nothing_else_runs(
        engine, decision, route, text, reply_has):
    agent, llm = make_agent(engine)
    small_talk(llm, decision)  # nothing else scripted: another call would fail
    before = db_snapshot(engine)
    res = agent.handle("demo_leader", text, turn_key="c:1")
    assert res.route == route and reply_has in res.reply
    assert [c[2].__name__ for c in llm.calls] == ["SmallTalkGate", "ConversationKind"]
    assert res.operation is None and not res.committed and not res.queued
    assert db_snapshot(engine) == before


def test_the_gate_is_asked_only_of_a_fresh_message(engine):
    # A conversational route ends the turn unverified, so after a rejected attempt (the message was a
    # real request) the classifier goes straight to its levels.
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(2, "wrong"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=45)).enqueue("verifier", verdict(10))
    res = agent.handle("demo_leader", "hi! my upload limit should be 45", turn_key="c:1")
    assert res.route == "system" and res.committed and res.args == {"Limit": 45}
    assert [c[2].__name__ for c in llm.calls].count("SmallTalkGate") == 1


@pytest.mark.parametrize("text", ["thanks! and what is my upload limit?", "谢谢，顺便问一下我的上传上限是多少？"])
def test_small_talk_that_turns_out_to_be_a_platform_question_takes_its_normal_route(engine, text):
    agent, llm = make_agent(engine)
    small_talk(llm, "platform_question")
    llm.enqueue("classifier", {"route": "own_fact"}).enqueue("executor", {"answer": "Your upload limit is 20."})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", text, turn_key="c:1")
    assert res.route == "basic_info" and res.reply == "Your upload limit is 20."


def test_the_one_level_ablations_have_no_gate(engine):
    agent, llm = make_agent(engine, architecture="cev_1level")
    llm.enqueue("classifier", {"route": "own_fact"}).enqueue("executor", {"answer": "You are a team leader."})
    llm.enqueue("verifier", verdict(9))
    assert agent.handle("demo_leader", "hello, what is my role?", turn_key="c:1").route == "basic_info"
    assert [c[2].__name__ for c in llm.calls if c[0] == "classifier"] == ["OneLevelDecision"]


ASKED_FOR_SCHOOL = TurnRecord(seq=1, user_text="please move me to another school", route="system",
                              operation="ChangeAllTypesSchool", outcome="refused_missing_args",
                              reply="I need a bit more information to do that: please tell me the exact name "
                                    "of the school.")


@pytest.mark.parametrize("dropped", ["never mind", "算了，不改了", "no, leave my school as it is"])
def test_never_mind_ends_the_pending_request(engine, dropped):
    agent, llm = make_agent(engine)
    small_talk(llm, "cancel_request")
    cancelled = agent.handle("demo_leader", dropped, history=[ASKED_FOR_SCHOOL], turn_key="c:2")
    assert cancelled.route == "cancel" and not cancelled.committed
    # A later message is a new request: the dropped one (and the question for its missing value) is
    # no longer shown to the classifier or the executor, so it cannot be completed by accident.
    history = [ASKED_FOR_SCHOOL, cancelled.to_record(dropped)]
    history[1].seq = 2
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=30)).enqueue("verifier", verdict(10))
    res = agent.handle("demo_leader", "set my upload limit to 30", history=history, turn_key="c:3")
    assert res.committed and res.operation == "ChangeAllTypesUploadLimit"
    for role in ("classifier", "executor"):
        assert "another school" not in prompt_text(llm, role) and "exact name of the school" not in prompt_text(
            llm, role)


def test_history_before_the_cancel_only_is_dropped(engine):
    agent, llm = make_agent(engine)
    cancel = TurnRecord(seq=2, user_text="forget it", route="cancel", reply="All right")
    later = TurnRecord(seq=3, user_text="what does the upload limit mean?", route="guide", reply="It caps uploads.")
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=20)).enqueue("verifier", verdict(10))
    agent.handle("demo_leader", "then make mine 20", history=[ASKED_FOR_SCHOOL, cancel, later], turn_key="c:4")
    executor_prompt = prompt_text(llm, "executor")
    assert "what does the upload limit mean?" in executor_prompt and "another school" not in executor_prompt


def test_a_request_said_again_word_for_word_after_a_turn_that_changed_nothing_goes_to_a_person(engine):
    agent, llm = make_agent(engine)
    text = "Please make an exception and raise my upload limit to 500 today"
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=500))  # refused by the platform: over 200
    llm.enqueue("verifier", verdict(9, "as asked"))
    first = agent.handle("demo_leader", text, turn_key="i:1")
    assert not first.committed and "between 0 and 200" in first.reply and llm.pending() == {}
    calls, before = len(llm.calls), db_snapshot(engine)
    again = agent.handle("demo_leader", f"  {text.upper()} ", history=[first.to_record(text)], turn_key="i:2")
    assert again.route == "handoff" and "a person will reply here" in again.reply
    assert len(llm.calls) == calls and db_snapshot(engine) == before  # no model call for the repeat


def test_a_question_answered_and_asked_again_is_no_insisting():
    from chops.pipeline.classifier import insisting
    text = "Where is a lost badge replaced, please?"
    answered = TurnRecord(user_text=text, reply="At the front desk.", route="guide")
    refused = TurnRecord(user_text=text, reply="I couldn't do that", route="system", outcome="refused_precondition")
    said_no = TurnRecord(user_text=text, reply="Sorry, that cannot be undone.", route="system")  # an answer in words
    asked = TurnRecord(user_text=text, reply="Which order?", route="system", outcome="refused_missing_args")
    waiting = TurnRecord(user_text=text, reply="Shall I go ahead?", route="system", outcome="pending_confirmation")
    assert insisting(text, [refused]) and insisting(text, [said_no])
    assert not any(insisting(text, [t]) for t in (answered, asked, waiting))
    assert not insisting("Where is a lost badge replaced?", [refused])  # not word for word
    # The answer to "shall I go on with your next request?" said again to the next such question (train task 103)
    yes = "Yes, that's everything. Please go ahead."
    go_on = TurnRecord(user_text=yes, reply="I couldn't do that. Shall I go on with your next request?", route="system",
                       outcome="refused_invalid_arg", trace={"go_on": "Ship my pending order home."})
    assert not insisting(yes, [go_on]) and insisting(yes, [go_on.model_copy(update={"trace": {}})])


def test_a_short_reply_said_twice_is_no_insisting(engine):
    agent, llm = make_agent(engine)
    small_talk(llm, "thanks_or_goodbye")
    history = [TurnRecord(user_text="ok thanks", reply="You're welcome", route="thanks")]
    assert agent.handle("demo_leader", "ok thanks", history=history, turn_key="s:2").route == "thanks"
