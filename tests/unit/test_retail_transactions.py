"""The retail writes through the shared runner on SQLite: a dry run is the same code without the commit, a plan
is all or nothing, an idempotency key replays instead of refunding twice, and every commit has its audit row."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from apis.retail import loader
from chops import tables as ct
from tests.unit.retail_support import MIA, balance, load_shop, order

CANCEL = ("cancel_pending_order", {"order_id": "#T0000002", "reason": "no longer needed"})
MOVE = ("modify_pending_order_payment", {"order_id": "#T0000001", "payment_method_id": "gift_card_mia"})


@pytest.fixture
def shop(sqlite_url):
    engine, api = load_shop(sqlite_url)
    yield engine, api
    engine.dispose()


def audit_rows(engine):
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.select(ct.audit_log).order_by(ct.audit_log.c.id))]


def test_a_dry_run_shows_the_diff_and_changes_nothing(shop):
    engine, api = shop
    before = loader.export(engine)
    dry = api.call(*CANCEL[:1], MIA, CANCEL[1], dry_run=True)
    assert (dry.outcome, dry.dry_run, dry.committed) == ("ok", True, False)
    assert {(c.table, c.field, c.after if c.field else None) for c in dry.diff} >= {
        ("retail_order", "status", "cancelled"), ("retail_payment_method", "balance", 220.0)}
    assert loader.export(engine) == before and audit_rows(engine) == []
    real = api.call(*CANCEL[:1], MIA, CANCEL[1])
    assert real.committed and real.diff == dry.diff  # the same code, now committed


def test_a_plan_of_two_writes_is_all_or_nothing(shop):
    engine, api = shop
    before = loader.export(engine)
    bad = ("cancel_pending_order", {"order_id": "#T0000003", "reason": "no longer needed"})  # delivered
    failed = api.call_plan(MIA, [CANCEL, bad])
    assert failed.outcome == "refused_precondition" and not failed.committed
    assert [s.outcome for s in failed.steps] == ["ok", "refused_precondition"]
    assert loader.export(engine) == before and audit_rows(engine) == []
    done = api.call_plan(MIA, [CANCEL, MOVE], idempotency_key="plan-1")
    assert done.outcome == "ok" and done.committed
    # 100.00 + 120.00 refunded - 90.20 paid: the second step saw the first step's credit
    assert balance(engine, MIA, "gift_card_mia") == 129.8
    assert [r["idempotency_key"] for r in audit_rows(engine)] == ["plan-1", "plan-1#2"]


def test_a_later_step_is_checked_against_the_earlier_steps_changes(shop):
    engine, api = shop
    twice = api.call_plan(MIA, [CANCEL, CANCEL])
    assert [s.outcome for s in twice.steps] == ["ok", "refused_precondition"] and not twice.committed
    assert order(engine, "#T0000002")["status"] == "pending"


def test_an_idempotency_key_replays_the_result_instead_of_refunding_twice(shop):
    engine, api = shop
    first = api.call(*CANCEL[:1], MIA, CANCEL[1], idempotency_key="k-1", request_id="req-1")
    again = api.call(*CANCEL[:1], MIA, CANCEL[1], idempotency_key="k-1")
    assert first.committed and again.replayed and again.outcome == "ok" and again.diff == first.diff
    assert balance(engine, MIA, "gift_card_mia") == 220.0 and len(order(engine, "#T0000002")["payment_history"]) == 2
    other = api.call("cancel_pending_order", MIA, {"order_id": "#T0000001", "reason": "no longer needed"},
                     idempotency_key="k-1")
    assert other.outcome == "refused_invalid_arg" and "already used" in other.message
    [row] = audit_rows(engine)
    assert (row["nickname"], row["operation"], row["outcome"], row["request_id"]) == (MIA, CANCEL[0], "ok", "req-1")
    assert {c["field"] for c in json.loads(row["diff_json"])} == {None, "balance", "status", "cancel_reason"}


def test_a_refusal_commits_nothing_and_writes_no_audit_row(shop):
    engine, api = shop
    before = loader.export(engine)
    result = api.call("modify_pending_order_payment", MIA, {"order_id": "#T0000001",
                                                           "payment_method_id": "gift_card_mia_small"},
                      idempotency_key="k-2")
    assert result.outcome == "refused_precondition" and not result.committed
    assert loader.export(engine) == before and audit_rows(engine) == []


def test_reads_are_not_plans_and_unknown_operations_are_named(shop):
    _, api = shop
    plan = api.call_plan(MIA, [("get_user_details", {})])
    assert plan.outcome == "refused_invalid_arg" and "only reads" in plan.message
    handoff = api.call("transfer_to_human_agents", MIA, {"summary": "help"})
    assert handoff.outcome == "refused_invalid_arg" and "Unknown operation" in handoff.message


def test_an_unknown_customer_changes_nothing(shop):
    engine, api = shop
    before = loader.export(engine)
    result = api.call(*CANCEL[:1], "ghost_0", CANCEL[1])
    assert result.outcome == "not_in_system" and loader.export(engine) == before
