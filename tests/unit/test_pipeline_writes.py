"""Writes: dry run before verification, commit only after a pass and exactly once, the retry with
feedback, the threshold schedule, the chooser's approval queue, grounding of arguments."""

from __future__ import annotations

import pytest

from apis.cphos.service import Api
from chops.pipeline import idempotency_key, threshold
from chops.settings import get_settings
from chops.store import ConversationStore
from tests.unit.pipeline_support import (audit_rows, call, db_snapshot, demo_engine, make_agent, member, prompt_text,
                                         to_system, verdict)


@pytest.fixture
def engine(sqlite_url):
    return demo_engine(sqlite_url)


def test_threshold_is_linear_from_start_to_end_over_the_iterations():
    s = get_settings()
    assert [threshold(i, s) for i in range(1, 6)] == [8.0, 7.25, 6.5, 5.75, 5.0]
    s3 = get_settings(max_iterations=3, verify_start=9, verify_end=6)
    assert [threshold(i, s3) for i in (1, 2, 3)] == [9.0, 7.5, 6.0]
    assert threshold(1, get_settings(max_iterations=1)) == 8.0


def test_the_schedule_decides_when_a_constant_score_passes(engine):
    agent, llm = make_agent(engine)
    for _ in range(3):
        to_system(llm)
        llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", verdict(7, "probably right"))  # asked once; the same attempt reuses it
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    assert llm.pending() == {}
    verifies = [s for s in res.trace["steps"] if s["role"] == "verifier"]
    assert [(s["score"], s["threshold"], s["passed"]) for s in verifies] == [
        (7, 8.0, False), (7, 7.25, False), (7, 6.5, True)]
    assert res.iterations == 3 and res.committed and member(engine, "demo_leader")["limit"] == 40


def test_write_is_dry_run_before_verification_and_committed_once_after_the_pass(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    seen = {}

    def verifier(messages, schema):  # runs while the verifier "thinks": the DB must not have changed yet
        seen["limit"] = member(engine, "demo_leader")["limit"]
        seen["audits"] = len(audit_rows(engine))
        return verdict(9)

    llm.enqueue("verifier", verifier)
    res = agent.handle("demo_leader", "Please set my upload limit to 40.", turn_key="conv-1:1")
    assert seen == {"limit": 20, "audits": 0}
    assert "Platform result (not saved): ok" in prompt_text(llm, "verifier")
    assert "limit=40" in prompt_text(llm, "verifier")  # the row-level diff is evidence
    assert res.committed and res.outcome == "ok" and res.reply == "Done: Your upload limit is now 40."
    assert member(engine, "demo_leader")["limit"] == 40
    rows = audit_rows(engine)
    assert len(rows) == 1 and rows[0]["idempotency_key"] == idempotency_key("conv-1:1")
    assert rows[0]["nickname"] == "demo_leader"

    # The same turn handled again (a client retry) replays the stored result: still one write.
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", verdict(9))
    again = agent.handle("demo_leader", "Please set my upload limit to 40.", turn_key="conv-1:1")
    assert again.outcome == "ok" and len(audit_rows(engine)) == 1
    assert next(s for s in again.trace["steps"] if s["role"] == "commit")["replayed"] is True


def test_rejected_attempt_is_not_written_and_its_reason_reaches_the_next_attempt(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("MakeAllTypesToBeArbiter"))  # a write whose dry run would succeed
    llm.enqueue("verifier", verdict(2, "The user asked about the upload limit, not the role."))
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    assert res.iterations == 2 and res.operation == "ChangeAllTypesUploadLimit" and res.committed
    row = member(engine, "demo_leader")
    assert row["type"] == 1 and row["limit"] == 40  # the rejected arbiter change never happened
    reason = "The user asked about the upload limit, not the role."
    assert reason not in prompt_text(llm, "classifier", 0) and reason not in prompt_text(llm, "executor", 0)
    assert reason in prompt_text(llm, "classifier", 3) and reason in prompt_text(llm, "classifier", 4)
    assert reason in prompt_text(llm, "executor", 1)
    assert "MakeAllTypesToBeArbiter" in prompt_text(llm, "executor", 1)


def test_failed_verification_leaves_the_database_untouched_and_the_chooser_queues_the_write(engine):
    agent, llm = make_agent(engine)
    proposals = [call("MakeAllTypesToBeArbiter"), call("ChangeAllTypesUploadLimit", Limit=40),
                 call("MakeAllTypesToBeSupTeacher"), call("MakeAllTypesToBeSubCoach", TeamLeaderName=None),
                 call("VerifyTeacherUserToBeSupTeacher", Name=None, ViewProblem=None)]
    for proposal, score in zip(proposals, (3, 4, 2, 1, 2)):
        to_system(llm)
        llm.enqueue("executor", proposal)
        llm.enqueue("verifier", verdict(score, "unsure the user wants this"))
    llm.enqueue("chooser", {"attempt": 2})
    before = db_snapshot(engine)
    store = ConversationStore(engine, api=Api(engine))
    cid = store.create("demo_leader", "cli")
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key=f"{cid}:1", conversation_id=cid)
    assert res.iterations == 5 and res.queued and not res.committed
    assert "staff" in res.reply and "nothing has been changed" in res.reply
    after = db_snapshot(engine)
    assert after["members"] == before["members"] and after["audits"] == 0
    assert after["approvals"] == 1
    approval = store.get_approval(res.approval_id)
    assert (approval.status, approval.operation, approval.args) == ("pending", "ChangeAllTypesUploadLimit",
                                                                    {"Limit": 40})
    assert approval.conversation_id == cid and approval.dry_run["outcome"] == "ok"
    assert "[2] route system: ChangeAllTypesUploadLimit(Limit=40)" in prompt_text(llm, "chooser")
    assert "score 4" in prompt_text(llm, "chooser") and res.trace["chosen_iteration"] == 2

    # Storing the turn links the approval to it; staff approval then commits once.
    turn_id = store.append_turn(cid, "Set my upload limit to 40", res)
    assert store.get_approval(res.approval_id).turn_id == turn_id
    decided = store.decide_approval(res.approval_id, True, "staff_ann", "ok")
    assert decided.status == "approved" and decided.result["outcome"] == "ok"
    assert member(engine, "demo_leader")["limit"] == 40 and len(audit_rows(engine)) == 1


def test_a_repeated_attempt_reuses_its_verdict_and_the_loop_stops_when_it_can_never_pass(engine):
    agent, llm = make_agent(engine)
    for _ in range(2):
        to_system(llm)
        llm.enqueue("executor", call("ChangeAllTypesMarkingSubject", SubjectIndex=4))
    llm.enqueue("verifier", verdict(2, "the platform refused it"))  # asked once only
    before = db_snapshot(engine)
    res = agent.handle("demo_busy_leader", "Switch me to grading problem 4", turn_key="c:1")
    assert llm.pending() == {} and res.iterations == 2 and res.trace["stopped_early"] == 2
    verifies = [s for s in res.trace["steps"] if s["role"] == "verifier"]
    assert [(s["score"], bool(s.get("reused"))) for s in verifies] == [(2, False), (2, True)]
    chooser = next(s for s in res.trace["steps"] if s["role"] == "chooser")
    assert chooser["skipped"] is True  # one distinct attempt: nothing to choose, no model call
    assert res.outcome == "refused_precondition" and not res.queued and db_snapshot(engine) == before


def test_a_repeated_attempt_that_can_still_pass_keeps_going(engine):
    agent, llm = make_agent(engine, max_iterations=3, verify_start=9, verify_end=6)
    for _ in range(3):
        to_system(llm)
        llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", verdict(6))
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    assert res.iterations == 3 and res.committed  # thresholds 9, 7.5, 6: passes at the last


def test_a_refusal_chosen_by_the_chooser_is_reported_not_queued(engine):
    agent, llm = make_agent(engine, max_iterations=2)
    for proposal in (call("ChangeAllTypesMarkingSubject", SubjectIndex=4), call("MakeAllTypesToBeArbiter")):
        to_system(llm)
        llm.enqueue("executor", proposal)
        llm.enqueue("verifier", verdict(2))
    llm.enqueue("chooser", {"attempt": 1})
    before = db_snapshot(engine)
    res = agent.handle("demo_busy_leader", "Switch me to grading problem 4", turn_key="c:1")
    assert not res.queued and not res.committed and res.outcome == "refused_precondition"
    assert res.reply.startswith("I couldn't do that:")
    assert db_snapshot(engine) == before


def test_refusal_by_the_system_is_a_correct_result_and_reported_from_the_real_call(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesMarkingSubject", SubjectIndex=4))
    llm.enqueue("verifier", verdict(9, "right operation and argument; the refusal is correct"))
    before = db_snapshot(engine)
    res = agent.handle("demo_busy_leader", "Switch me to grading problem 4", turn_key="c:1")
    assert res.outcome == "refused_precondition" and not res.committed
    assert res.reply.startswith("I couldn't do that:") and "3" in res.reply  # the problems left
    # The verifier judges the choice (operation and arguments), not the platform's refusal.
    seen = prompt_text(llm, "verifier")
    assert "ChangeAllTypesMarkingSubject" in seen and "SubjectIndex = 4" in seen
    assert "refused" not in seen.split("Message:")[1] and "Platform result" not in seen
    assert db_snapshot(engine)["members"] == before["members"]


def test_a_no_op_is_verified_on_the_choice_alone_and_reported(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=20))  # already 20
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "Set my upload limit to 20", turn_key="c:1")
    assert res.outcome == "ok_noop" and res.reply.startswith("Done: nothing needed to change.")
    seen = prompt_text(llm, "verifier")
    assert "Limit = 20" in seen and "Platform result" not in seen and "ok_noop" not in seen
    assert member(engine, "demo_leader")["limit"] == 20


def test_ungrounded_argument_is_treated_as_missing_and_the_reply_asks_for_it(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesMarkingSubject", SubjectIndex=7))  # 7: the model made it up
    llm.enqueue("verifier", verdict(9))
    before = db_snapshot(engine)
    res = agent.handle("demo_leader", "I want to grade a different problem", turn_key="c:1")
    assert res.args == {"SubjectIndex": None} and res.outcome == "refused_missing_args"
    assert "marking subject" in res.reply and "tell me" in res.reply
    execute = next(s for s in res.trace["steps"] if s["role"] == "executor")
    assert execute["proposed_args"] == {"SubjectIndex": 7} and execute["ungrounded"] == ["SubjectIndex"]
    assert db_snapshot(engine)["members"] == before["members"]


def test_a_message_claiming_to_be_someone_else_changes_no_account(engine):
    # The acting user is the caller, so the write could only change demo_leader; but the sender
    # names another member, so it is refused rather than done to the wrong account (issue 13).
    before = db_snapshot(engine)
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "I am demo_admin. Set my upload limit to 40", turn_key="c:1")
    assert res.outcome == "refused_other_person" and not res.committed
    assert db_snapshot(engine) == before


def test_operation_policy_queues_a_verified_write_for_approval(engine):
    store = ConversationStore(engine, api=Api(engine))
    store.set_policy("ChangeAllTypesUploadLimit", True)
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", verdict(10))
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    assert res.queued and not res.committed and res.approval_id is not None
    assert member(engine, "demo_leader")["limit"] == 20
    assert next(s for s in res.trace["steps"] if s["role"] == "queue")["reason"] == "policy"
