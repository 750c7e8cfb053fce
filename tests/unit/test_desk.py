"""The support desk on a real SQLite database: every state change with who and when, messages held
for staff, the agent's history after a release, offering a person, staff presence, the queue."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from chops import tables as t
from chops.conversation import ConversationService
from chops.desk import DeskError, Presence
from chops.desk.log import events_after, now
from chops.desk.notices import LATER, OFFER, offer_reason
from chops.desk.queue import staff_queue
from chops.i18n import translate
from chops.records import TurnRecord, TurnResult
from chops.store import ConversationStore
from tests.unit.desk_support import HANDOFF_REPLY, RecordingAgent, script_handoff
from tests.unit.pipeline_support import call, demo_engine, make_agent, to_guide, to_system, verdict


@pytest.fixture
def desk(sqlite_url):
    engine = demo_engine(sqlite_url)
    agent, llm = make_agent(engine)
    presence = Presence(engine, window_s=600)
    svc = ConversationService(ConversationStore(engine, api=agent.api), RecordingAgent(agent), presence=presence)
    return svc, llm, engine


def kinds(engine, cid) -> list[tuple]:
    return [(e.kind, e.actor, e.body.get("from"), e.body.get("to")) for e in events_after(engine, cid)]


def test_every_transition_is_stored_with_who_and_when(desk):
    svc, llm, engine = desk
    cid = svc.start("demo_leader", "widget")
    assert svc.desk.state(cid).state == "agent"  # no row: the agent has it
    before = now().replace(microsecond=0)
    script_handoff(llm)
    turn = svc.run_turn(cid, "demo_leader", "Can I talk to a human?")
    assert turn.result.route == "handoff" and turn.result.reply.startswith(HANDOFF_REPLY)
    waiting = svc.desk.state(cid)
    assert (waiting.state, waiting.staff, waiting.changed_by) == ("waiting", None, "demo_leader")
    assert waiting.changed_at >= before
    with pytest.raises(DeskError) as err:
        svc.desk.release(cid, "Erin")
    assert (err.value.code, err.value.state) == ("invalid_state", "waiting")
    claimed = svc.desk.claim(cid, "Erin")
    assert (claimed.state, claimed.staff, claimed.changed_by) == ("staff", "Erin", "Erin")
    assert svc.desk.claim(cid, "Erin") == claimed  # a second click changes nothing
    for action in (svc.desk.claim, svc.desk.release, svc.desk.close):
        with pytest.raises(DeskError) as err:
            action(cid, "Sam")
        assert err.value.code == "already_claimed"
    with pytest.raises(DeskError) as err:
        svc.desk.staff_message(cid, "Sam", "I can help")
    assert err.value.code == "already_claimed"
    svc.desk.staff_message(cid, "Erin", "Hello, Erin here.")
    released = svc.desk.release(cid, "Erin")
    assert (released.state, released.staff, released.changed_by) == ("agent", None, "Erin")
    with pytest.raises(DeskError) as err:
        svc.desk.claim(cid, "Erin")  # staff take conversations from the queue (waiting) only
    assert err.value.code == "invalid_state"
    script_handoff(llm)
    svc.run_turn(cid, "demo_leader", "A person again please")
    closed = svc.desk.close(cid, "Sam")
    assert (closed.state, closed.changed_by) == ("closed", "Sam")
    with pytest.raises(DeskError) as err:
        svc.hold(cid, "demo_leader", "hello?")
    assert err.value.code == "conversation_closed"
    with pytest.raises(DeskError) as err:
        svc.desk.claim("no-such-conversation", "Erin")
    assert err.value.code == "conversation_not_found"
    assert kinds(engine, cid) == [
        ("turn", "agent", None, None), ("state", "demo_leader", "agent", "waiting"),
        ("state", "Erin", "waiting", "staff"), ("staff", "Erin", None, None), ("state", "Erin", "staff", "agent"),
        ("turn", "agent", None, None), ("state", "demo_leader", "agent", "waiting"),
        ("state", "Sam", "waiting", "closed")]
    with engine.connect() as conn:
        row = conn.execute(sa.select(t.conversation_state)).mappings().one()
    assert (row["state"], row["changed_by"]) == ("closed", "Sam")


def test_messages_while_staff_have_it_are_held_and_the_agent_sees_them_after_the_release(desk):
    svc, llm, engine = desk
    cid = svc.start("demo_leader", "widget")
    assert svc.hold(cid, "demo_leader", "hi") is None  # the agent has it: the caller runs the turn
    script_handoff(llm)
    svc.run_turn(cid, "demo_leader", "I want a person")
    calls = len(llm.calls)
    event, state = svc.hold(cid, "demo_leader", "My upload limit is wrong")
    assert (event.kind, event.actor, event.text, state.state) == ("user", "demo_leader", "My upload limit is wrong",
                                                                  "waiting")
    svc.desk.claim(cid, "Erin")
    svc.desk.staff_message(cid, "Erin", "Tell the assistant the number you need.", display_name="Erin L.")
    svc.desk.release(cid, "Erin")
    assert len(llm.calls) == calls  # nothing went to a model while staff had it
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    turn = svc.run_turn(cid, "demo_leader", "Please make it 40")
    assert turn.result.committed and turn.seq == 2
    history = svc.agent.seen[-1]
    assert [(h.user_text, h.reply, h.staff) for h in history[-2:]] == [
        ("My upload limit is wrong", None, None), ("", "Tell the assistant the number you need.", "Erin L.")]
    executor_prompt = "\n".join(c for _, c in [c for c in llm.calls if c[0] == "executor"][-1][1])
    assert "Support staff (Erin L.): Tell the assistant the number you need." in executor_prompt
    assert "User: My upload limit is wrong" in executor_prompt


def test_a_person_is_offered_when_the_verifier_never_passes(desk):
    svc, llm, engine = desk
    cid = svc.start("demo_leader", "widget")
    for _ in range(2):  # the same rejected answer twice (its verdict reused): the loop stops early, unverified
        to_guide(llm)
        llm.enqueue("executor", {"source": 1, "answer": "Maybe."})
    llm.enqueue("verifier", verdict(2, "vague"))  # one distinct candidate: no chooser call
    turn = svc.run_turn(cid, "demo_leader", "When are uploads due?")
    assert llm.pending() == {}
    assert turn.result.reply.endswith(OFFER) and turn.result.trace["handoff_offered"] == "unverified"
    assert svc.desk.state(cid).state == "agent"  # offered, not handed over: the user decides
    stored = svc.store.history(cid, with_trace=True)[-1]
    assert stored.reply.endswith(OFFER) and stored.trace["handoff_offered"] == "unverified"


def test_the_offer_of_a_person_is_said_once_where_the_answer_already_says_it(desk):
    svc, llm, engine = desk
    cid = svc.start("demo_leader", "widget")
    for _ in range(2):
        to_guide(llm)
        llm.enqueue("executor", {"source": 1, "answer": f"Maybe. {OFFER}"})  # written back from an earlier reply
    llm.enqueue("verifier", verdict(2, "vague"))
    turn = svc.run_turn(cid, "demo_leader", "When are uploads due?")
    assert turn.result.reply.count(OFFER) == 1 and turn.result.trace["handoff_offered"] == "unverified"


def test_a_person_is_offered_in_chinese_for_a_chinese_request(desk):
    svc, llm, engine = desk
    cid = svc.start("demo_leader", "widget")
    to_system(llm)
    llm.enqueue("executor", call("GetTeacherInfoBySchoolName", SchoolName="Lakeside Academy"))
    llm.enqueue("verifier", verdict(9))
    turn = svc.run_turn(cid, "demo_leader", "Lakeside Academy 有哪些老师？请列出全部")
    assert turn.result.outcome == "refused_permission" and turn.result.trace["handoff_offered"] == "refused"
    assert turn.result.reply.endswith(translate("zh", OFFER)) and translate("zh", OFFER) != OFFER


def _result(**fields) -> TurnResult:
    return TurnResult(reply="r", **fields)


@pytest.mark.parametrize(("result", "previous", "reason"), [
    (_result(route="system", outcome="refused_permission"), None, "refused"),
    (_result(route="system", outcome="refused_other_person"), None, "refused"),
    (_result(route="system", outcome="refused_missing_args"), None, None),
    (_result(route="system", outcome="refused_missing_args"),
     TurnRecord(user_text="x", route="system", outcome="refused_invalid_arg"), "failed_twice"),
    (_result(route="system", outcome="refused_missing_args"),
     TurnRecord(user_text="x", route="system", outcome="ok"), None),
    (_result(route="system", outcome="ok", queued=True, trace={"architecture": "cev_2level", "passed": False}),
     None, None),  # a queued write already waits for staff
    (_result(route="guide", trace={"architecture": "cev_2level", "passed": False}), None, "unverified"),
    (_result(route="guide", trace={"architecture": "executor_only", "passed": False}), None, None),
    (_result(route="guide", trace={"architecture": "cev_2level", "passed": True, "steps": []}),
     TurnRecord(user_text="x", route="guide", trace={"architecture": "cev_2level", "passed": True, "steps": []}),
     "failed_twice"),  # two guide answers without a cited source
    (_result(route="handoff"), None, None),
])
def test_when_a_person_is_offered(result, previous, reason):
    assert offer_reason(result, previous) == reason


def test_with_nobody_active_the_user_is_told_a_person_answers_later(desk):
    svc, llm, engine = desk
    cid = svc.start("demo_leader", "widget")
    script_handoff(llm)
    turn = svc.run_turn(cid, "demo_leader", "我想找人工客服")
    assert turn.result.reply.endswith(translate("zh", LATER)) and turn.result.trace["staff_active"] is False
    svc.presence.seen("Erin")
    assert svc.presence.anyone_active()
    cid2 = svc.start("demo_vice", "widget")
    script_handoff(llm)
    turn = svc.run_turn(cid2, "demo_vice", "A human please")
    assert turn.result.reply == HANDOFF_REPLY and turn.result.trace["staff_active"] is True
    with engine.begin() as conn:  # Erin's last request is older than the window
        conn.execute(t.staff_presence.update().values(last_seen_at=now() - timedelta(seconds=601)))
    assert not svc.presence.anyone_active()
    assert Presence(engine, window_s=700).anyone_active()


def test_the_queue_summarises_what_the_user_wants_and_what_the_agent_tried(desk):
    svc, llm, engine = desk
    first = svc.start("demo_leader", "widget")
    for _ in range(2):
        to_system(llm)
        llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=400))
    llm.enqueue("verifier", verdict(2, "the limit is out of range"))
    svc.run_turn(first, "demo_leader", "Set my upload limit to 400")
    script_handoff(llm)
    svc.run_turn(first, "demo_leader", "Let me talk to someone")
    second = svc.start("demo_vice", "widget")
    script_handoff(llm)
    svc.run_turn(second, "demo_vice", "请帮我转人工")
    svc.hold(second, "demo_vice", "我的学校名字错了")
    items = staff_queue(engine, "waiting")
    assert [i.conversation_id for i in items] == [first, second]  # longest waiting first
    one, two = items
    assert one.wants == ["Set my upload limit to 400"] and one.language == "en" and one.wait_seconds >= 0
    assert one.tried[0]["operation"] == "ChangeAllTypesUploadLimit" and one.tried[0]["passed"] is False
    assert one.tried[0]["reason"] == "the limit is out of range"
    assert "ChangeAllTypesUploadLimit" in one.summary and "not verified" in one.summary
    assert two.wants == ["我的学校名字错了"] and two.language == "zh" and two.tried == []
    svc.desk.claim(second, "Erin")
    assert [i.conversation_id for i in staff_queue(engine, "waiting")] == [first]
    assert [(i.conversation_id, i.staff) for i in staff_queue(engine, "staff")] == [(second, "Erin")]
