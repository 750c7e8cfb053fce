"""The pending changes (``chops.pending``) on SQLite and MariaDB: kept exactly, one open per conversation,
decided once, and the confirmed commit of a real CPHOS write through the agent."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from apis.cphos.db import init_schema
from apis.cphos.loaders import seed_demo
from chops.db import make_engine
from chops.pending import PendingChanges
from tests.unit.pipeline_support import call, make_agent, member, to_system, verdict

STEPS = [("ChangeAllTypesUploadLimit", {"Limit": 40})]


@pytest.fixture
def engine(db_url):
    eng = make_engine(db_url)
    init_schema(eng)
    seed_demo(eng)
    yield eng
    eng.dispose()


def test_a_change_is_kept_exactly_and_decided_once(engine):
    store = PendingChanges(engine, ttl_s=60)
    first = store.offer(conversation_id="c1", nickname="demo_leader", steps=STEPS, diff=[{"field": "limit"}],
                        description="- change your upload limit: 40", idempotency_key="turn-abc")
    kept = store.open_for("c1")  # (MariaDB's DATETIME keeps whole seconds: compare what was kept, not the clock)
    assert kept.model_dump(exclude={"created_at", "expires_at"}) == first.model_dump(exclude={"created_at",
                                                                                              "expires_at"})
    assert kept.steps == STEPS and kept.diff == [{"field": "limit"}] and not kept.lapsed()
    second = store.offer(conversation_id="c1", nickname="demo_leader", steps=STEPS, diff=[],
                         description="again", idempotency_key="turn-def")
    assert store.open_for("c1").id == second.id  # the newer change supersedes the older
    assert not store.close(first.id, "committed")  # no longer open
    with ThreadPoolExecutor(4) as pool:  # four answers racing: exactly one decides it
        decided = list(pool.map(lambda _: store.close(second.id, "committed"), range(4)))
    assert decided.count(True) == 1 and store.open_for("c1") is None and store.open_for("c2") is None


def test_a_confirmed_write_commits_on_the_yes_only(engine):
    agent, llm = make_agent(engine, pending=PendingChanges(engine), confirm_writes="all")
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    asked = agent.handle("demo_leader", "Please set my upload limit to 40", turn_key="c9:1", conversation_id="c9")
    assert asked.outcome == "pending_confirmation" and member(engine, "demo_leader")["limit"] != 40
    llm.enqueue("classifier", {"answer": "yes_go_ahead"})
    done = agent.handle("demo_leader", "yes", turn_key="c9:2", conversation_id="c9")
    assert done.committed and member(engine, "demo_leader")["limit"] == 40
