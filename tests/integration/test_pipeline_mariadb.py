"""The pipeline over real MariaDB (scripted model): a verified write commits once, a rejected one
is queued and stays unwritten, and the conversation store keeps the turns."""

from __future__ import annotations

import pytest

from chops.store import ConversationStore
from tests.unit.pipeline_support import (audit_rows, call, db_snapshot, demo_engine, make_agent, member, to_system,
                                         verdict)

pytestmark = pytest.mark.mariadb


@pytest.fixture
def engine(mariadb_url):
    engine = demo_engine(mariadb_url)
    yield engine
    engine.dispose()


def test_verified_write_commits_once_and_the_turn_is_stored(engine):
    store = ConversationStore(engine)
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
    store = ConversationStore(engine)
    assert store.decide_approval(res.approval_id, True, "staff").result["outcome"] == "ok"
    assert member(engine, "demo_leader")["type"] == 2
