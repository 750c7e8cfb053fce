"""ConversationStore on a real SQLite database: conversations, turns, approvals, policies."""

from __future__ import annotations

import pytest

from apis.cphos.service import Api
from chops.pipeline import TurnResult
from chops.store import ConversationStore, StoreError
from tests.unit.pipeline_support import audit_rows, demo_engine, member


@pytest.fixture
def store(sqlite_url):
    return ConversationStore(eng := demo_engine(sqlite_url), api=Api(eng))


def result(reply="ok", **kw) -> TurnResult:
    return TurnResult(reply=reply, route="system", trace={"steps": [{"role": "executor"}]}, **kw)


def test_conversation_turns_are_kept_in_order_with_their_trace(store):
    cid = store.create("demo_leader", "cli")
    assert store.get(cid).nickname == "demo_leader" and store.get(cid).turns == 0
    assert store.turn_key(cid) == f"{cid}:1"
    store.append_turn(cid, "first", result("one", operation="ChangeAllTypesUploadLimit", args={"Limit": 4},
                                           outcome="ok", committed=True))
    store.append_turn(cid, "second", result("two"))
    assert store.next_seq(cid) == 3 and store.get(cid).turns == 2
    hist = store.history(cid)
    assert [(t.seq, t.user_text, t.reply) for t in hist] == [(1, "first", "one"), (2, "second", "two")]
    assert hist[0].args == {"Limit": 4} and hist[0].committed and hist[0].trace is None
    assert store.history(cid, with_trace=True)[0].trace == {"steps": [{"role": "executor"}]}
    assert [t.seq for t in store.history(cid, limit=1)] == [2]


def test_the_same_seq_twice_is_refused(store):
    import sqlalchemy as sa

    cid = store.create("demo_leader")
    store.append_turn(cid, "a", result(), seq=1)
    with pytest.raises(sa.exc.IntegrityError):
        store.append_turn(cid, "b", result(), seq=1)


def test_unknown_conversation_and_bad_channel_are_clear_errors(store):
    with pytest.raises(StoreError) as err:
        store.append_turn("nope", "x", result())
    assert err.value.code == "not_found"
    with pytest.raises(StoreError) as err:
        store.create("demo_leader", "carrier-pigeon")
    assert err.value.code == "bad_request"
    assert store.get("nope") is None


def test_list_conversations_newest_first_and_by_nickname(store):
    a = store.create("demo_leader")
    b = store.create("demo_admin")
    store.append_turn(a, "later", result())
    assert [c.id for c in store.list_conversations()][0] == a
    assert [c.id for c in store.list_conversations(nickname="demo_admin")] == [b]


def test_queue_is_idempotent_and_reject_changes_nothing(store):
    args = dict(nickname="demo_leader", operation="ChangeAllTypesUploadLimit", args={"Limit": 40},
                idempotency_key="k-1", dry_run={"outcome": "ok"})
    first = store.queue_approval(**args)
    assert store.queue_approval(**args) == first
    assert [a.id for a in store.list_approvals("pending")] == [first]
    rejected = store.decide_approval(first, False, "staff_bo", "not needed")
    assert (rejected.status, rejected.decided_by, rejected.note) == ("rejected", "staff_bo", "not needed")
    assert member(store.engine, "demo_leader")["limit"] == 20 and audit_rows(store.engine) == []
    with pytest.raises(StoreError) as err:
        store.decide_approval(first, True, "staff_bo")
    assert err.value.code == "already_decided"
    with pytest.raises(StoreError) as err:
        store.decide_approval(999, True, "staff_bo")
    assert err.value.code == "not_found"


def test_approve_commits_through_the_api_with_the_stored_key_once(store):
    aid = store.queue_approval(nickname="demo_leader", operation="ChangeAllTypesUploadLimit", args={"Limit": 40},
                               idempotency_key="k-2")
    done = store.decide_approval(aid, True, "staff_bo")
    assert done.status == "approved" and done.result["committed"] is True
    assert member(store.engine, "demo_leader")["limit"] == 40
    rows = audit_rows(store.engine)
    assert len(rows) == 1 and rows[0]["idempotency_key"] == "k-2"
    assert store.list_approvals("pending") == [] and len(store.list_approvals(None)) == 1
    with pytest.raises(StoreError):
        store.list_approvals("maybe")


def test_a_write_that_fails_puts_the_request_back_in_the_queue(store):
    class Down:
        def call_plan(self, *args, **kwargs):
            raise ConnectionError("database went away")

    aid = store.queue_approval(nickname="demo_leader", operation="ChangeAllTypesUploadLimit", args={"Limit": 40},
                               idempotency_key="k-3")
    with pytest.raises(ConnectionError):
        ConversationStore(store.engine, api=Down()).decide_approval(aid, True, "staff_bo", "ok")
    back = store.get_approval(aid)
    assert (back.status, back.decided_by, back.decided_at, back.result) == ("pending", None, None, None)
    assert member(store.engine, "demo_leader")["limit"] == 20 and audit_rows(store.engine) == []
    assert store.decide_approval(aid, True, "staff_bo").result["committed"] is True
    assert member(store.engine, "demo_leader")["limit"] == 40


def test_operation_policies(store):
    assert store.needs_approval("AddNewSchoolByName") is False
    store.set_policy("AddNewSchoolByName", True)
    assert store.needs_approval("AddNewSchoolByName") is True
    store.set_policy("AddNewSchoolByName", False)
    assert store.get_policies() == {"AddNewSchoolByName": False}
    with pytest.raises(StoreError):
        store.set_policy("DropTables", True)


def test_a_write_is_queued_only_in_a_conversation_that_exists(store):
    with pytest.raises(StoreError) as err:
        store.queue_approval(nickname="demo_leader", operation="ChangeAllTypesUploadLimit", args={"Limit": 40},
                             idempotency_key="k-made-up", conversation_id="eval:made-up")
    assert err.value.code == "not_found" and store.list_approvals(None) == []
    cid = store.create("demo_leader", "eval")
    aid = store.queue_approval(nickname="demo_leader", operation="ChangeAllTypesUploadLimit", args={"Limit": 40},
                               idempotency_key="k-real", conversation_id=cid)
    assert store.get_approval(aid).conversation_id == cid
