"""What the changes of a conversation came to in money: the amount each retail write moves (a refund positive, a
charge negative), a plan's sum, and the total a reply says once two or more such changes were committed."""

from __future__ import annotations

from decimal import Decimal

import pytest

from apis.retail.registry import OPERATIONS
from chops.pipeline.context import TurnContext
from chops.pipeline.tally import MONEY, done_before, moved, total_line, with_total
from chops.pipeline.trace import Trace
from chops.records import TurnRecord, TurnResult
from tests.unit.retail_support import MIA, load_shop


@pytest.fixture
def api(sqlite_url):
    engine, api = load_shop(sqlite_url)
    yield api
    engine.dispose()


def test_a_cancel_refunds_what_was_paid_and_says_the_gift_cards_new_balance(api):
    result = api.call("cancel_pending_order", MIA, {"order_id": "#T0000002", "reason": "no longer needed"})
    assert result.committed and result.money == Decimal("120.00")
    assert "gift_card_mia now holds $220.00" in result.message


def test_a_return_refunds_its_lines(api):
    result = api.call("return_delivered_order_items", MIA, {
        "order_id": "#T0000003", "item_ids": ["k-glass-1l", "s-silk-red"], "payment_method_id": "credit_card_mia"})
    assert result.committed and result.money == Decimal("125.50")


def test_a_dearer_item_is_a_charge_and_a_cheaper_one_a_refund(api):
    dearer = api.call("modify_pending_order_items", MIA, {
        "order_id": "#T0000001", "item_ids": ["k-steel-1l"], "new_item_ids": ["k-glass-1l"],
        "payment_method_id": "gift_card_mia"})
    assert dearer.committed and dearer.money == Decimal("-5.50")
    assert "gift_card_mia now holds $94.50" in dearer.message
    cheaper = api.call("exchange_delivered_order_items", MIA, {
        "order_id": "#T0000003", "item_ids": ["s-silk-red"], "new_item_ids": ["s-wool-red"],
        "payment_method_id": "credit_card_mia"})
    assert cheaper.committed and cheaper.money == Decimal("54.90")


def test_a_change_that_moves_no_money_says_none(api):
    result = api.call("modify_pending_order_address", MIA, {
        "order_id": "#T0000001", "address1": "2 New Road", "address2": "", "city": "Testville", "state": "ZZ",
        "country": "USA", "zip": "11111"})
    assert result.committed and result.money is None
    paid = api.call("modify_pending_order_payment", MIA, {"order_id": "#T0000001", "payment_method_id": "paypal_mia"})
    assert paid.committed and paid.money is None  # one method refunded, the other charged: nothing to the customer


def test_a_plan_moves_the_sum_of_its_steps(api):
    plan = api.call_plan(MIA, [("cancel_pending_order", {"order_id": "#T0000001", "reason": "no longer needed"}),
                               ("cancel_pending_order", {"order_id": "#T0000002", "reason": "no longer needed"})],
                         dry_run=True)
    assert plan.money == Decimal("210.20") and [s.money for s in plan.steps] == [Decimal("90.20"), Decimal("120.00")]


def commit(*amounts: str, committed: bool = True, replayed: bool = False) -> dict:
    return {"role": "commit", "committed": committed, "replayed": replayed, MONEY: list(amounts),
            "steps": [{"operation": "refund", "outcome": "ok", "message": f"Refunded ${a}."} for a in amounts]}


def turn(*steps: dict) -> TurnRecord:
    return TurnRecord(user_text="yes", reply="Done.", route="system", trace={"steps": list(steps)})


def result(*steps: dict, committed: bool = True) -> TurnResult:
    return TurnResult(reply="Done: refunded.", route="system", committed=committed, trace={"steps": list(steps)})


def test_only_committed_first_runs_count_and_a_zero_is_no_amount():
    traces = [{"steps": [commit("10.00", "0.00"), commit("5.00", committed=False), commit("7.50", replayed=True),
                         {"role": "execute", MONEY: ["99"]}]}, None, {"steps": [commit("-2.25")]}]
    assert moved(traces) == [Decimal("10.00"), Decimal("-2.25")]


@pytest.mark.parametrize("amounts,lang,said", [
    (["3131.10", "4777.75", "367.38"], "en", "refund you $8,276.23."),
    (["-60.78", "-107.09"], "en", "charge you $167.87."),
    (["10", "-1"], "en", "refund you $10.00 and charge you $1.00, so you get $9.00 back in all."),
    (["60.78", "-167.87"], "en", "refund you $60.78 and charge you $167.87, so you pay $107.09 in all."),
    (["20", "5"], "zh", "合计退款 US$25.00"),
])
def test_the_total_sums_refunds_and_charges_apart(amounts, lang, said):
    assert said in total_line([Decimal(a) for a in amounts], "USD", lang)


def test_the_total_follows_a_commit_once_two_changes_moved_money():
    history = [turn(commit("3131.10")), turn({"role": "execute"})]
    after = with_total(result(commit("367.38")), history, "USD", "en")
    assert after.reply == "Done: refunded.\nIn total, the changes made in this conversation refund you $3,498.48."


@pytest.mark.parametrize("history,now,currency", [
    ([], result(commit("3131.10")), "USD"),  # the first change: its own reply says its amount
    ([turn(commit("1.00"))], result(commit("2.00")), None),  # a system that moves no money
    ([turn(commit("1.00"))], result(commit("2.00"), committed=False), "USD"),  # nothing committed this turn
    ([turn(commit("1.00"))], result({"role": "execute"}), "USD"),  # an answer after the changes
])
def test_no_total_without_a_second_change_of_money_committed_now(history, now, currency):
    assert with_total(now, history, currency, "en").reply == now.reply


def test_the_prompts_history_lists_what_the_changes_did_and_their_total():
    history = [turn(commit("10.00")), turn(commit("5.00", committed=False)), turn(commit("-2.50", "4.00"))]
    ctx = TurnContext(nickname="u1", text="how much do I get back in all?", profile=None, history=history,
                      trace=Trace(), currency="USD")
    assert ctx.done() == ["Refunded $10.00.", "Refunded $-2.50.", "Refunded $4.00.",
                          "In total, the changes made in this conversation refund you $14.00 and charge you $2.50, so "
                          "you get $11.50 back in all."]
    assert "Changes made in this conversation (the system's own results):\n- Refunded $10.00." in ctx.history_section()
    ctx.currency = None  # a system that moves no money: what was done, no total
    assert ctx.done()[-1] == "Refunded $4.00."


def _committed(operation: str, args: dict, message: str) -> TurnRecord:
    step = {"role": "commit", "committed": True, "replayed": False,
            "steps": [{"operation": operation, "args": args, "outcome": "ok", "message": message}]}
    return TurnRecord(user_text="yes", reply="Done", trace={"steps": [step]})


@pytest.mark.parametrize("operation, args, said", [
    ("return_delivered_order_items", {"order_id": "#T0000003", "item_ids": ["k-glass-1l"]}, "Return of the kettle"),
    ("return_delivered_order_items", {"order_id": "#T0000003", "item_ids": ["s-silk-red"]}, None),  # another line
    ("return_delivered_order_items", {"order_id": "#T0000004", "item_ids": ["k-glass-1l"]}, None),  # another order
    ("exchange_delivered_order_items", {"order_id": "#T0000003", "item_ids": ["k-glass-1l"],
                                        "new_item_ids": ["k-red-1l"]}, None),  # another write of the order
])
def test_a_write_done_before_is_the_same_write_of_the_same_record_and_lines(operation, args, said):
    history = [_committed("return_delivered_order_items", {"order_id": "#T0000003", "item_ids": ["k-glass-1l"],
                                                           "payment_method_id": "credit_card_mia"},
                          "Return of the kettle")]
    assert done_before(OPERATIONS[operation], args, history) == said
    assert done_before(OPERATIONS[operation], args, []) is None
