"""Requests of several changes: the executor's plan, grounded and target-checked step by step, dry-run
as one plan, verified on the combined evidence, committed atomically (or queued as one approval), and
a reply that says exactly which part was done and which was not. Scripted model, real SQLite demo data."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from apis.cphos import tables as t
from apis.cphos.service import Api
from chops.pipeline import idempotency_key
from chops.pipeline.events import Commit, Execute, Reply, events_of
from chops.store import ConversationStore, StoreError
from tests.unit.pipeline_support import (audit_rows, db_snapshot, demo_engine, make_agent, member, plan, prompt_text,
                                         to_system, verdict)

LIMIT, SUBJECT, SCHOOL = "ChangeAllTypesUploadLimit", "ChangeAllTypesMarkingSubject", "ChangeAllTypesSchool"


@pytest.fixture
def engine(sqlite_url):
    return demo_engine(sqlite_url)


def script(llm, *steps, score=9):
    """One round: routed to the system, the executor proposes ``steps``, the verifier scores it."""
    to_system(llm)
    llm.enqueue("executor", plan(*steps))
    llm.enqueue("verifier", verdict(score, "does what was asked" if score >= 8 else "unsure"))


BOTH_DONE = [
    ("Set my upload limit to 40 and switch my marking subject to problem 3",
     [(LIMIT, {"Limit": 40}), (SUBJECT, {"SubjectIndex": 3})], {"limit": 40, "subject": 3}),
    ("Move me to Lakeside Academy, and raise my upload limit to sixty please",
     [(SCHOOL, {"SchoolName": "Lakeside Academy"}), (LIMIT, {"Limit": 60})], {"school_id": 2, "limit": 60}),
    ("请把我的上传上限改为40，并把阅卷题号改成3",
     [(LIMIT, {"Limit": 40}), (SUBJECT, {"SubjectIndex": 3})], {"limit": 40, "subject": 3}),
    ("把我调到Riverside School，上传上限设为五十",
     [(SCHOOL, {"SchoolName": "Riverside School"}), (LIMIT, {"Limit": 50})], {"school_id": 4, "limit": 50}),
]


@pytest.mark.parametrize("text,steps,after", BOTH_DONE)
def test_two_changes_are_both_done_in_one_commit_under_one_key(engine, text, steps, after):
    agent, llm = make_agent(engine)
    script(llm, *steps)
    res = agent.handle("demo_leader", text, turn_key="c:1")
    assert res.committed and res.outcome == "ok" and not res.queued
    row = member(engine, "demo_leader")
    assert {k: row[k] for k in after} == after
    key = idempotency_key("c:1")
    assert [(a["idempotency_key"], a["operation"]) for a in audit_rows(engine)] == [
        (key, steps[0][0]), (f"{key}#2", steps[1][0])]
    assert [s["operation"] for s in res.steps] == [op for op, _ in steps] and res.operation == steps[0][0]
    evidence = prompt_text(llm, "verifier")
    assert "Step 1." in evidence and "Step 2." in evidence and "All changes together (not saved):" in evidence
    done = "已完成" if "的" in text or "把" in text else "Done:"
    assert res.reply.count(done) == 2
    assert [e.operations for e in events_of(res.trace, Commit)] == [[op for op, _ in steps]]
    assert len(events_of(res.trace, Execute)[0].steps) == 2
    assert events_of(res.trace, Reply)[0].operations == [op for op, _ in steps]


PARTLY = [  # (sender, text, plan, what is left undone, words of the reason)
    ("demo_busy_leader", "Set my upload limit to 40 and change my marking subject to 4",
     [(LIMIT, {"Limit": 40}), (SUBJECT, {"SubjectIndex": 4})], "Not done (change your marking subject: 4)",
     "not finished marking"),
    ("demo_leader", "Raise my upload limit to 40 and also change my school",
     [(LIMIT, {"Limit": 40}), (SCHOOL, {"SchoolName": None})], "Not done (change your school)",
     "please tell me the exact name of the school"),
    ("demo_leader", "upload limit 40 please, and move me to Atlantis High",
     [(LIMIT, {"Limit": 40}), (SCHOOL, {"SchoolName": "Atlantis High"})],
     "Not done (change your school: Atlantis High)", "There is no school named 'Atlantis High'"),
    ("demo_busy_leader", "上传上限改成40，阅卷题号改成4", [(LIMIT, {"Limit": 40}), (SUBJECT, {"SubjectIndex": 4})],
     "未办理（更改阅卷题号：4）", "您账户的当前状态不允许"),
]


@pytest.mark.parametrize("sender,text,steps,undone,why", PARTLY)
def test_when_one_part_cannot_be_done_the_other_is_and_the_reply_says_which_and_why(engine, sender, text, steps,
                                                                                    undone, why):
    agent, llm = make_agent(engine)
    before = member(engine, sender)
    script(llm, *steps)
    res = agent.handle(sender, text, turn_key="c:1")
    after = member(engine, sender)
    assert res.committed and res.outcome == "partial"
    assert after["limit"] == 40 and {k: after[k] for k in ("subject", "school_id")} == \
        {k: before[k] for k in ("subject", "school_id")}
    assert [a["operation"] for a in audit_rows(engine)] == [LIMIT]
    assert undone in res.reply and why in res.reply
    first = res.reply.splitlines()[0]
    assert first.startswith("Done: Your upload limit is now 40") or first.startswith("已完成")
    assert [s["outcome"] for s in res.steps][0] == "ok" and res.steps[1]["outcome"].startswith("refused_")


@pytest.mark.parametrize("text", ["Set my upload limit to 40 and move me to Lakeside Academy",
                                  "把上传上限改成40，学校换成Lakeside Academy"])
def test_a_step_refused_at_commit_leaves_nothing_committed(engine, text):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", plan((LIMIT, {"Limit": 40}), (SCHOOL, {"SchoolName": "Lakeside Academy"})))

    def verifier(messages, schema):  # between the dry run and the commit, the school is removed
        with engine.begin() as conn:
            conn.execute(t.school.delete().where(t.school.c.school_name == "Lakeside Academy"))
        return verdict(9)

    llm.enqueue("verifier", verifier)
    res = agent.handle("demo_leader", text, turn_key="c:1")
    assert not res.committed and res.outcome == "refused_invalid_arg"
    assert (member(engine, "demo_leader")["limit"], member(engine, "demo_leader")["school_id"]) == (20, 1)
    assert audit_rows(engine) == []
    assert res.reply.startswith("Nothing was changed") or res.reply.startswith("未做任何更改")
    commit = next(s for s in res.trace["steps"] if s["role"] == "commit")
    assert commit["committed"] is False and [s["outcome"] for s in commit["steps"]] == ["ok", "refused_invalid_arg"]


def test_the_same_turn_retried_writes_once(engine):
    agent, llm = make_agent(engine)
    text = "Set my upload limit to 40 and switch my marking subject to problem 3"
    results = []
    for _ in range(2):
        script(llm, (LIMIT, {"Limit": 40}), (SUBJECT, {"SubjectIndex": 3}))
        results.append(agent.handle("demo_leader", text, turn_key="conv:7"))
    assert all(r.committed and r.outcome == "ok" for r in results)
    assert len(audit_rows(engine)) == 2  # one row per step, written once
    commits = [next(s for s in r.trace["steps"] if s["role"] == "commit") for r in results]
    assert [c["replayed"] for c in commits] == [False, True]
    assert results[0].reply == results[1].reply


@pytest.mark.parametrize("text", ["Set my upload limit to 40 and change my marking subject to 3",
                                  "上传上限改为40，阅卷题号改为3"])
def test_an_unverified_plan_is_queued_as_one_approval_and_approving_commits_it_atomically(engine, text):
    agent, llm = make_agent(engine, max_iterations=1)
    script(llm, (LIMIT, {"Limit": 40}), (SUBJECT, {"SubjectIndex": 3}), score=3)
    store = ConversationStore(engine, api=Api(engine))
    cid = store.create("demo_leader", "cli")
    before = db_snapshot(engine)
    res = agent.handle("demo_leader", text, turn_key=f"{cid}:1", conversation_id=cid)
    assert res.queued and not res.committed and res.outcome == "ok"
    after = db_snapshot(engine)
    assert after["members"] == before["members"] and after["audits"] == 0 and after["approvals"] == 1
    approval = store.get_approval(res.approval_id)
    assert [(s.operation, s.args) for s in approval.steps] == [(LIMIT, {"Limit": 40}), (SUBJECT, {"SubjectIndex": 3})]
    assert [s["outcome"] for s in approval.dry_run["steps"]] == ["ok", "ok"]
    assert ("40" in res.reply and "3" in res.reply) and ("staff" in res.reply or "工作人员" in res.reply)

    decided = store.decide_approval(res.approval_id, True, "staff_ann")
    assert decided.status == "approved" and decided.result["committed"] is True
    assert (member(engine, "demo_leader")["limit"], member(engine, "demo_leader")["subject"]) == (40, 3)
    assert [a["idempotency_key"] for a in audit_rows(engine)] == [approval.idempotency_key,
                                                                 f"{approval.idempotency_key}#2"]
    with pytest.raises(StoreError):  # a second click is refused by the claim
        store.decide_approval(res.approval_id, True, "staff_bo")
    assert len(audit_rows(engine)) == 2


def test_an_approval_whose_later_step_is_refused_commits_nothing(engine):
    agent, llm = make_agent(engine, architecture="ce_1level")  # no verifier: every write is queued
    llm.enqueue("classifier", {"route": "do_operation"})
    llm.enqueue("executor", plan((LIMIT, {"Limit": 40}), (SCHOOL, {"SchoolName": "Lakeside Academy"})))
    store = ConversationStore(engine, api=Api(engine))
    res = agent.handle("demo_leader", "limit 40 and move me to Lakeside Academy", turn_key="c:1")
    assert res.queued and res.trace["steps"][-1]["reason"] == "unverified"
    with engine.begin() as conn:  # before staff decide, the school is removed
        conn.execute(t.school.delete().where(t.school.c.school_name == "Lakeside Academy"))
    decided = store.decide_approval(res.approval_id, True, "staff_ann")
    assert decided.status == "failed" and decided.result["committed"] is False
    assert member(engine, "demo_leader")["limit"] == 20 and audit_rows(engine) == []


def test_an_operation_under_an_approval_policy_sends_the_whole_plan_to_staff(engine):
    agent, llm = make_agent(engine)
    ConversationStore(engine, api=Api(engine)).set_policy(SCHOOL, True)
    script(llm, (LIMIT, {"Limit": 40}), (SCHOOL, {"SchoolName": "Lakeside Academy"}))
    res = agent.handle("demo_leader", "Set my upload limit to 40 and move me to Lakeside Academy", turn_key="c:1")
    assert res.queued and not res.committed and member(engine, "demo_leader")["limit"] == 20
    queue = next(s for s in res.trace["steps"] if s["role"] == "queue")
    assert queue["reason"] == "policy" and queue["operations"] == [LIMIT, SCHOOL]


@pytest.mark.parametrize("sender,text,steps,who", [
    ("demo_leader", "Set my upload limit to 40 and make Olga Other's marking subject 5",
     [(LIMIT, {"Limit": 40}), (SUBJECT, {"SubjectIndex": 5})], "Olga Other"),
    ("demo_leader", "change Bruno Busy's upload limit to 40, and my subject to 5",
     [(LIMIT, {"Limit": 40}), (SUBJECT, {"SubjectIndex": 5})], "Bruno Busy"),
    ("demo_busy_leader", "把我的上传上限改成40，并把Lena Leader的阅卷题号改成5",
     [(LIMIT, {"Limit": 40}), (SUBJECT, {"SubjectIndex": 5})], "Lena Leader"),
])
def test_a_plan_naming_another_person_in_any_step_is_refused_and_nothing_runs(engine, sender, text, steps, who):
    agent, llm = make_agent(engine)
    script(llm, *steps)
    before = db_snapshot(engine)
    res = agent.handle(sender, text, turn_key="c:1")
    assert db_snapshot(engine) == before
    assert not res.committed and not res.queued and res.outcome == "refused_other_person"
    assert who in res.reply
    execute = next(s for s in res.trace["steps"] if s["role"] == "executor")
    assert all(s["outcome"] == "refused_other_person" and s["dry_run"] is False for s in execute["steps"])


def test_a_repeated_call_in_a_plan_is_one_change(engine):
    agent, llm = make_agent(engine)
    script(llm, (LIMIT, {"Limit": 40}), (LIMIT, {"Limit": 40}))
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    assert res.committed and res.reply == "Done: Your upload limit is now 40." and len(audit_rows(engine)) == 1


def test_a_read_in_a_plan_runs_for_real_and_the_write_is_committed(engine):
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", plan(("GetTeacherInfoBySchoolName", {"SchoolName": "Lakeside Academy"}),
                                 (LIMIT, {"Limit": 90})))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_admin", "List the users of Lakeside Academy, and set my upload limit to 90",
                       turn_key="c:1")
    assert res.committed and member(engine, "demo_admin")["limit"] == 90
    assert "Bruno Busy" in res.reply and res.reply.splitlines()[-1] == "Done: Your upload limit is now 90."
    assert [a["operation"] for a in audit_rows(engine)] == [LIMIT]  # the read is not a plan step


def test_a_member_named_only_by_a_read_still_stops_the_writes(engine):
    # Conservative on purpose: the target check looks at the writes' own argument values.
    agent, llm = make_agent(engine)
    script(llm, ("GetTeacherInfoByName", {"TeacherName": "Lena Leader"}), (LIMIT, {"Limit": 90}))
    before = db_snapshot(engine)
    res = agent.handle("demo_admin", "Look up Lena Leader, and set my upload limit to 90", turn_key="c:1")
    assert res.outcome == "refused_other_person" and db_snapshot(engine) == before


def test_the_executor_is_asked_for_a_bounded_plan(engine):
    agent, llm = make_agent(engine)
    script(llm, (LIMIT, {"Limit": 40}))
    agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    schema = next(c[2] for c in llm.calls if c[0] == "executor")
    calls = schema.model_json_schema()["properties"]["calls"]
    assert (calls["minItems"], calls["maxItems"]) == (1, 3)
    with pytest.raises(ValidationError):
        schema.model_validate(plan(*[(LIMIT, {"Limit": n}) for n in (1, 2, 3, 4)]))
    with pytest.raises(ValidationError):
        schema.model_validate({"calls": []})
