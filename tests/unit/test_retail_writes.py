"""The retail pack's seven writes against the README's table and policy.md, on a made-up shop (SQLite): each
precondition refuses with its outcome code and changes nothing, each effect is exact to the cent and recorded
as row-level changes."""

from __future__ import annotations

import pytest

from apis.retail import loader
from tests.unit.retail_support import LEO, MIA, balance, load_shop, order


@pytest.fixture
def shop(sqlite_url):
    engine, api = load_shop(sqlite_url)
    yield engine, api
    engine.dispose()


def refused(shop, name, args, outcome, words, user=MIA):
    """Run a write that must be refused: its outcome, a message with ``words``, and no change at all."""
    engine, api = shop
    before = loader.export(engine)
    result = api.call(name, user, args)
    assert result.outcome == outcome, result.message
    assert words.lower() in result.message.lower(), result.message
    assert not result.committed and result.diff == []
    assert loader.export(engine) == before
    return result


def ok(shop, name, args, user=MIA):
    result = shop[1].call(name, user, args)
    assert result.outcome == "ok" and result.committed, result.message
    return result


# --- cancel_pending_order --------------------------------------------------------------------------

def test_cancel_refunds_each_payment_and_credits_a_gift_card_at_once(shop):
    engine, _ = shop
    result = ok(shop, "cancel_pending_order", {"order_id": "#T0000002", "reason": "ordered by mistake"})
    o = order(engine, "#T0000002")
    assert o["status"] == "cancelled" and o["cancel_reason"] == "ordered by mistake"
    assert o["payment_history"][-1] == {"transaction_type": "refund", "amount": 120.0,
                                        "payment_method_id": "gift_card_mia"}
    assert balance(engine, MIA, "gift_card_mia") == 220.0
    assert "credited now" in result.message
    tables = {(c.table, c.field) for c in result.diff}
    assert tables == {("retail_payment", None), ("retail_payment_method", "balance"), ("retail_order", "status"),
                      ("retail_order", "cancel_reason")}


def test_cancel_of_a_card_payment_refunds_the_card_and_touches_no_balance(shop):
    engine, _ = shop
    ok(shop, "cancel_pending_order", {"order_id": "#T0000001", "reason": "No longer needed "})
    o = order(engine, "#T0000001")
    assert o["cancel_reason"] == "no longer needed"
    assert o["payment_history"] == [
        {"transaction_type": "payment", "amount": 90.2, "payment_method_id": "credit_card_mia"},
        {"transaction_type": "refund", "amount": 90.2, "payment_method_id": "credit_card_mia"}]
    assert balance(engine, MIA, "gift_card_mia") == 100.0


def test_cancel_after_a_payment_change_refunds_what_each_method_still_holds(shop):
    engine, _ = shop
    ok(shop, "cancel_pending_order", {"order_id": "#T0000006", "reason": "no longer needed"})
    refunds = [p for p in order(engine, "#T0000006")["payment_history"][3:]]
    assert refunds == [{"transaction_type": "refund", "amount": 38.99, "payment_method_id": "gift_card_mia"}]
    assert balance(engine, MIA, "gift_card_mia") == 138.99


@pytest.mark.parametrize("order_id", ["#T0000003", "#T0000004", "#T0000005", "#T0000007"])
def test_only_a_pending_order_can_be_cancelled(shop, order_id):
    refused(shop, "cancel_pending_order", {"order_id": order_id, "reason": "no longer needed"},
            "refused_precondition", "only a pending order can be cancelled")


def test_cancel_needs_one_of_the_two_reasons(shop):
    refused(shop, "cancel_pending_order", {"order_id": "#T0000001", "reason": "found it cheaper"},
            "refused_invalid_arg", "'no longer needed' or 'ordered by mistake'")
    refused(shop, "cancel_pending_order", {"order_id": "#T0000001"}, "refused_missing_args", "reason")


# --- another customer's order ----------------------------------------------------------------------

@pytest.mark.parametrize("name,args", [
    ("cancel_pending_order", {"order_id": "#T0000008", "reason": "no longer needed"}),
    ("modify_pending_order_address", {"order_id": "#T0000008", "address1": "1 A St", "city": "X", "state": "Y",
                                      "country": "USA", "zip": "00000"}),
    ("modify_pending_order_payment", {"order_id": "#T0000008", "payment_method_id": "paypal_mia"}),
    ("modify_pending_order_items", {"order_id": "#T0000008", "item_ids": ["k-red-1l"], "new_item_ids": ["k-glass-1l"],
                                    "payment_method_id": "paypal_mia"}),
    ("exchange_delivered_order_items", {"order_id": "#T0000009", "item_ids": ["s-wool-red"],
                                        "new_item_ids": ["s-wool-blue"], "payment_method_id": "paypal_mia"}),
    ("return_delivered_order_items", {"order_id": "#T0000009", "item_ids": ["s-wool-red"],
                                      "payment_method_id": "gift_card_mia"}),
])
def test_a_customer_cannot_change_another_customers_order(shop, name, args):
    result = refused(shop, name, args, "not_in_system", f"no order {args['order_id']} on your account")
    missing = shop[1].call(name, MIA, {**args, "order_id": "#T9999999"})
    assert missing.message == result.message.replace(args["order_id"], "#T9999999")  # as if it did not exist


def test_another_customers_payment_method_is_not_yours(shop):
    refused(shop, "modify_pending_order_payment", {"order_id": "#T0000001", "payment_method_id": "gift_card_leo"},
            "not_in_system", "not one of your payment methods")


# --- modify_pending_order_address / modify_user_address -----------------------------------------------

NEW_ADDRESS = {"address1": "55 Quay Street", "address2": "", "city": "Harbortown", "state": "QQ", "country": "USA",
               "zip": "33333"}


@pytest.mark.parametrize("order_id", ["#T0000001", "#T0000007"])
def test_a_pending_order_ships_to_a_new_address(shop, order_id):
    engine, _ = shop
    result = ok(shop, "modify_pending_order_address", {"order_id": order_id, **NEW_ADDRESS})
    assert order(engine, order_id)["address"] == {k: NEW_ADDRESS[k] for k in
                                                  ("address1", "address2", "city", "country", "state", "zip")}
    assert {c.field for c in result.diff} == {"address1", "city", "state", "zip"}  # address2 was already empty


def test_an_address_whose_second_line_is_null_has_none(shop):
    engine, _ = shop  # a blank value reaches the platform as null (the grounding's "not given")
    ok(shop, "modify_pending_order_address", {"order_id": "#T0000001", **NEW_ADDRESS, "address2": None})
    assert order(engine, "#T0000001")["address"]["address2"] == ""
    refused(shop, "modify_user_address", {**NEW_ADDRESS, "city": None}, "refused_missing_args", "city")


def test_a_delivered_order_keeps_its_address(shop):
    refused(shop, "modify_pending_order_address", {"order_id": "#T0000003", **NEW_ADDRESS}, "refused_precondition",
            "only a pending order can change its address")


def test_the_customer_changes_only_their_own_default_address(shop):
    engine, api = shop
    result = ok(shop, "modify_user_address", NEW_ADDRESS)
    users = loader.export(engine)["users"]
    assert users[MIA]["address"]["address1"] == "55 Quay Street" and users[MIA]["address"]["address2"] == ""
    assert users[LEO]["address"]["address1"] == "9 Pine Road"
    assert all(c.key == {"user_id": MIA} for c in result.diff)
    again = api.call("modify_user_address", MIA, NEW_ADDRESS)
    assert again.outcome == "ok_noop" and again.diff == []
    refused(shop, "modify_user_address", {**NEW_ADDRESS, "user_id": LEO}, "refused_invalid_arg", "user_id")


# --- modify_pending_order_payment ------------------------------------------------------------------

def test_paying_with_a_gift_card_takes_its_balance_and_refunds_the_old_method(shop):
    engine, _ = shop
    ok(shop, "modify_pending_order_payment", {"order_id": "#T0000001", "payment_method_id": "gift_card_mia"})
    assert order(engine, "#T0000001")["payment_history"][1:] == [
        {"transaction_type": "payment", "amount": 90.2, "payment_method_id": "gift_card_mia"},
        {"transaction_type": "refund", "amount": 90.2, "payment_method_id": "credit_card_mia"}]
    assert balance(engine, MIA, "gift_card_mia") == 9.8  # 100.00 - 90.20, to the cent


def test_moving_a_gift_card_payment_to_a_card_credits_the_gift_card(shop):
    engine, _ = shop
    ok(shop, "modify_pending_order_payment", {"order_id": "#T0000002", "payment_method_id": "paypal_mia"})
    assert balance(engine, MIA, "gift_card_mia") == 220.0
    assert order(engine, "#T0000002")["status"] == "pending"


def test_a_gift_card_must_cover_the_order(shop):
    refused(shop, "modify_pending_order_payment", {"order_id": "#T0000008", "payment_method_id": "gift_card_leo"},
            "refused_precondition", "gift card gift_card_leo has $10.00, less than the $38.99", user=LEO)


@pytest.mark.parametrize("order_id,method,outcome,words", [
    ("#T0000001", "credit_card_mia", "refused_invalid_arg", "already paid with credit_card_mia"),
    ("#T0000006", "credit_card_mia", "refused_precondition", "exactly one payment"),
    ("#T0000003", "paypal_mia", "refused_precondition", "only a pending order"),
    ("#T0000001", "bitcoin_mia", "not_in_system", "not one of your payment methods"),
])
def test_payment_change_preconditions(shop, order_id, method, outcome, words):
    refused(shop, "modify_pending_order_payment", {"order_id": order_id, "payment_method_id": method}, outcome, words)
