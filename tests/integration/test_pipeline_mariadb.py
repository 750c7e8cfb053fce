"""The pipeline and the conversation service over real MariaDB (scripted model): a verified write
commits once, a rejected or unverified one is queued and stays unwritten, the store keeps the turns,
and the real driver's refused connection is the API's 503 ``database_unavailable``."""

from __future__ import annotations

import pytest

from apis.cphos.service import Api
from chops.conversation import ConversationService
from chops.db import make_engine
from chops.llm import LLMError, ScriptedLLM
from chops.settings import get_settings
from chops.store import ConversationStore
from chops.web.app import create_app
from tests.unit.pipeline_support import (audit_rows, call, db_snapshot, demo_engine, make_agent, member, plan,
                                         to_system, verdict)
from tests.unit.web_support import SECRET, user_token

pytestmark = pytest.mark.mariadb


@pytest.fixture
def engine(mariadb_url):
    engine = demo_engine(mariadb_url)
    yield engine
    engine.dispose()


def test_verified_write_commits_once_and_the_turn_is_stored(engine):
    store = ConversationStore(engine, api=Api(engine))
    cid = store.create("demo_leader", "cli")
    agent, llm = make_agent(engine)
    for _ in range(2):  # the same turn twice: the second is a replay
        to_system(llm)
        llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
        llm.enqueue("verifier", verdict(9))
    key = store.turn_key(cid)
    res = agent.handle("demo_leader", "Set my upload limit to 40", history=store.history(cid), turn_key=key)
    again = agent.handle("demo_leader", "Set my upload limit to 40", history=store.history(cid), turn_key=key)
    assert res.committed and again.outcome == "ok"
    assert member(engine, "demo_leader")["limit"] == 40 and len(audit_rows(engine)) == 1
    store.append_turn(cid, "Set my upload limit to 40", res)
    [turn] = store.history(cid, with_trace=True)
    assert turn.committed and turn.args == {"Limit": 40} and turn.trace["steps"]


def test_rejected_write_is_queued_and_the_database_is_untouched(engine):
    agent, llm = make_agent(engine, max_iterations=2)
    for _ in range(2):
        to_system(llm)
        llm.enqueue("executor", call("MakeAllTypesToBeArbiter"))
        llm.enqueue("verifier", verdict(3, "the user did not ask for this"))
    llm.enqueue("chooser", {"attempt": 1})
    before = db_snapshot(engine)
    res = agent.handle("demo_leader", "make me an arbiter", turn_key="conv-m:1")
    assert res.queued and not res.committed
    after = db_snapshot(engine)
    assert after["members"] == before["members"] and after["audits"] == 0 and after["approvals"] == 1
    store = ConversationStore(engine, api=Api(engine))
    assert store.decide_approval(res.approval_id, True, "staff").result["outcome"] == "ok"
    assert member(engine, "demo_leader")["type"] == 2


def test_an_unverified_write_is_queued_in_the_real_conversation_and_a_failed_turn_stores_nothing(engine):
    agent, llm = make_agent(engine, architecture="ce_1level")
    svc = ConversationService(ConversationStore(engine, api=agent.api), agent)
    cid = svc.start("demo_leader", "widget")
    llm.enqueue("classifier", {"route": "do_operation"}).enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    turn = svc.run_turn(cid, "demo_leader", "Set my upload limit to 40")
    assert turn.result.queued and member(engine, "demo_leader")["limit"] == 20
    approval = svc.store.get_approval(turn.result.approval_id)
    assert (approval.conversation_id, approval.turn_id) == (cid, turn.turn_id)
    llm.enqueue("classifier", LLMError("timeout", "the model stayed busy"))
    before = db_snapshot(engine)
    with pytest.raises(LLMError):
        svc.run_turn(cid, "demo_leader", "Set my upload limit to 30")
    assert db_snapshot(engine) == before and [t.seq for t in svc.store.history(cid)] == [1]


def test_a_database_that_refuses_connections_is_503_database_unavailable():
    # The real driver against a closed loopback port: the same error a stopped MariaDB gives.
    app = create_app(get_settings(secret_key=SECRET), llm=ScriptedLLM(),
                     engine=make_engine("mysql+pymysql://root@127.0.0.1:9/nowhere"), index=None)
    resp = app.test_client().post("/v1/conversations", json={"token": user_token("demo_leader")})
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (503, "database_unavailable")


def test_a_plan_commits_atomically_partly_and_through_one_approval_on_mariadb(engine):
    """Several changes on the real database: both in one commit (audit K, K#2) and replayed once; a
    part that cannot be done is reported while the other commits; an unverified plan is one approval."""
    from chops import tables as ct

    limit, subject = ("ChangeAllTypesUploadLimit", {"Limit": 40}), ("ChangeAllTypesMarkingSubject", {"SubjectIndex": 3})
    agent, llm = make_agent(engine)
    for _ in range(2):
        to_system(llm)
        llm.enqueue("executor", plan(limit, subject))
        llm.enqueue("verifier", verdict(9))
    text = "Set my upload limit to 40 and switch my marking subject to problem 3"
    res = agent.handle("demo_leader", text, turn_key="m:1")
    again = agent.handle("demo_leader", text, turn_key="m:1")
    assert res.committed and res.outcome == "ok" and again.reply == res.reply
    assert (member(engine, "demo_leader")["limit"], member(engine, "demo_leader")["subject"]) == (40, 3)
    assert [a["operation"] for a in audit_rows(engine)] == [limit[0], subject[0]]

    to_system(llm)  # demo_busy_leader still has marking left: the subject part cannot be done
    llm.enqueue("executor", plan(limit, ("ChangeAllTypesMarkingSubject", {"SubjectIndex": 4})))
    llm.enqueue("verifier", verdict(9))
    part = agent.handle("demo_busy_leader", "上传上限改成40，阅卷题号改成4", turn_key="m:2")
    assert part.committed and part.outcome == "partial" and "未办理" in part.reply
    busy = member(engine, "demo_busy_leader")
    assert (busy["limit"], busy["subject"]) == (40, 3)

    queuing, llm2 = make_agent(engine, architecture="ce_1level")
    llm2.enqueue("classifier", {"route": "do_operation"})
    llm2.enqueue("executor", plan(("ChangeAllTypesUploadLimit", {"Limit": 70}),
                                  ("ChangeAllTypesSchool", {"SchoolName": "Lakeside Academy"})))
    queued = queuing.handle("demo_vice", "upload limit 70, and move me to Lakeside Academy", turn_key="m:3")
    assert queued.queued and member(engine, "demo_vice")["limit"] == 10
    decided = ConversationStore(engine, api=Api(engine)).decide_approval(queued.approval_id, True, "staff")
    assert decided.status == "approved" and len(decided.steps) == 2
    vice = member(engine, "demo_vice")
    assert (vice["limit"], vice["school_id"]) == (70, 2)
    with engine.connect() as conn:
        assert conn.execute(ct.approval_step.select()).mappings().one()["position"] == 2
