"""The retail writes that change or give back items: modify_pending_order_items, exchange_delivered_order_items
and return_delivered_order_items, on the made-up shop (SQLite)."""

from __future__ import annotations

import pytest

from tests.unit.retail_support import LEO, MIA, balance, load_shop, order
from tests.unit.test_retail_writes import ok, refused


@pytest.fixture
def shop(sqlite_url):
    engine, api = load_shop(sqlite_url)
    yield engine, api
    engine.dispose()


def swap(order_id, old, new, method="paypal_mia"):
    return {"order_id": order_id, "item_ids": old, "new_item_ids": new, "payment_method_id": method}


# --- modify_pending_order_items --------------------------------------------------------------------

def test_each_changed_line_gets_its_own_new_items_price_and_options(shop):
    engine, _ = shop
    # Two different products in one call: tau2 would give both lines the scarf's price and options.
    result = ok(shop, "modify_pending_order_items",
                swap("#T0000001", ["k-steel-1l", "s-wool-red"], ["k-glass-1l", "s-silk-red"], "credit_card_mia"))
    o = order(engine, "#T0000001")
    assert [(i["item_id"], i["price"], i["options"]) for i in o["items"]] == [
        ("k-glass-1l", 45.5, {"material": "glass", "capacity": "1L"}),
        ("s-silk-red", 80.0, {"fabric": "silk", "color": "red"}),
        ("s-wool-red", 25.1, {"fabric": "wool", "color": "red"})]  # the second red wool scarf is untouched
    assert o["status"] == "pending (item modified)"
    # 45.50 - 40.00 + 80.00 - 25.10 = 60.40 exactly (in floats: 60.400000000000006)
    assert o["payment_history"][-1] == {"transaction_type": "payment", "amount": 60.4,
                                        "payment_method_id": "credit_card_mia"}
    assert sum(i["price"] for i in o["items"]) == pytest.approx(sum(
        p["amount"] * (1 if p["transaction_type"] == "payment" else -1) for p in o["payment_history"]))
    assert result.data["total"] == 150.6  # what the look-up shows: 45.50 + 80.00 + 25.10, the prices as they are now
    fields = [(c.table, c.key.get("seq"), c.field) for c in result.diff if c.table == "retail_order_item"]
    assert fields == [("retail_order_item", 0, "item_id"), ("retail_order_item", 0, "price"),
                      ("retail_order_item", 0, "options"), ("retail_order_item", 1, "item_id"),
                      ("retail_order_item", 1, "price"), ("retail_order_item", 1, "options")]
    # What each line becomes, as the customer confirms it (it said "same options": read after the update).
    assert "Kettle (material: steel -> glass, $40.00 -> $45.50); Scarf (fabric: wool -> silk, $25.10 -> $80.00)" \
        in result.message, result.message


def test_an_item_given_twice_changes_two_lines_and_a_cheaper_item_refunds_the_gift_card(shop):
    engine, _ = shop
    ok(shop, "modify_pending_order_items",
       swap("#T0000001", ["s-wool-red", "s-wool-red"], ["s-wool-blue", "s-silk-red"], "gift_card_mia"))
    o = order(engine, "#T0000001")
    assert [i["item_id"] for i in o["items"]] == ["k-steel-1l", "s-wool-blue", "s-silk-red"]
    # 27.35 + 80.00 - 2 * 25.10 = 57.15 paid from the gift card
    assert o["payment_history"][-1] == {"transaction_type": "payment", "amount": 57.15,
                                        "payment_method_id": "gift_card_mia"}
    assert balance(engine, MIA, "gift_card_mia") == 42.85


def test_a_cheaper_item_is_a_refund_credited_to_the_gift_card(shop):
    engine, _ = shop
    ok(shop, "modify_pending_order_items", swap("#T0000001", ["k-steel-1l"], ["k-red-1l"], "gift_card_mia"))
    o = order(engine, "#T0000001")
    assert o["payment_history"][-1] == {"transaction_type": "refund", "amount": 1.01,
                                        "payment_method_id": "gift_card_mia"}
    assert balance(engine, MIA, "gift_card_mia") == 101.01


def test_items_can_change_only_once(shop):
    ok(shop, "modify_pending_order_items", swap("#T0000001", ["k-steel-1l"], ["k-glass-1l"]))
    refused(shop, "modify_pending_order_items", swap("#T0000001", ["s-wool-red"], ["s-wool-blue"]),
            "refused_precondition", "'pending (item modified)'")
    refused(shop, "cancel_pending_order", {"order_id": "#T0000001", "reason": "no longer needed"},
            "refused_precondition", "only a pending order can be cancelled")


@pytest.mark.parametrize("args,outcome,words", [
    (swap("#T0000003", ["k-glass-1l"], ["k-steel-1l"]), "refused_precondition", "only a pending order"),
    (swap("#T0000001", ["k-steel-1l"], ["k-steel-1l"]), "refused_invalid_arg", "choose a different option"),
    (swap("#T0000001", ["k-steel-1l"], ["s-wool-blue"]), "refused_invalid_arg", "not a variant of kettle"),
    (swap("#T0000001", ["k-steel-1l"], ["no-such-item"]), "refused_invalid_arg", "not a variant of kettle"),
    (swap("#T0000001", ["k-steel-1l"], ["k-steel-2l"]), "refused_precondition", "not available"),
    (swap("#T0000001", ["c-black"], ["c-white"]), "refused_invalid_arg", "has 0 line(s) of item c-black"),
    (swap("#T0000001", ["s-wool-red"] * 3, ["s-wool-blue"] * 3), "refused_invalid_arg", "has 2 line(s)"),
    (swap("#T0000001", ["k-steel-1l", "s-wool-red"], ["k-glass-1l"]), "refused_invalid_arg", "one new item per item"),
    (swap("#T0000001", ["k-steel-1l"], ["k-glass-1l"], "gift_card_mia_small"), "refused_precondition",
     "has $3.00, less than the $5.50 price difference"),
    (swap("#T0000001", ["k-steel-1l"], ["k-glass-1l"], "gift_card_leo"), "not_in_system", "not one of your"),
    (swap("#T0000001", [], []), "refused_missing_args", "item_ids"),
])
def test_modify_items_preconditions(shop, args, outcome, words):
    refused(shop, "modify_pending_order_items", args, outcome, words)


# --- exchange_delivered_order_items ------------------------------------------------------------------

def test_an_exchange_is_requested_and_no_money_moves_yet(shop):
    engine, _ = shop
    result = ok(shop, "exchange_delivered_order_items",
                swap("#T0000003", ["s-silk-red", "k-glass-1l"], ["s-wool-blue", "k-red-1l"], "gift_card_mia_small"))
    o = order(engine, "#T0000003")
    assert o["status"] == "exchange requested"
    assert (o["exchange_items"], o["exchange_new_items"]) == (["k-glass-1l", "s-silk-red"], ["k-red-1l", "s-wool-blue"])
    assert o["exchange_payment_method_id"] == "gift_card_mia_small"
    assert o["exchange_price_difference"] == -59.16  # 27.35 + 38.99 - 80.00 - 45.50
    assert len(o["payment_history"]) == 1 and balance(engine, MIA, "gift_card_mia_small") == 3.0
    assert [i["item_id"] for i in o["items"]] == ["k-glass-1l", "s-silk-red"]  # the items change on the exchange itself
    assert {c.field for c in result.diff} == {"status", "exchange_items", "exchange_new_items",
                                              "exchange_payment_method_id", "exchange_price_difference"}
    # The message names what each line becomes (the verifier and the customer read it, not bare ids).
    assert ("Scarf (fabric: silk -> wool, color: red -> blue, $80.00 -> $27.35); Kettle (material: glass -> enamel, "
            "$45.50 -> $38.99)") in result.message, result.message
    refused(shop, "exchange_delivered_order_items", swap("#T0000003", ["k-glass-1l"], ["k-steel-1l"]),
            "refused_precondition", "only a delivered order")


@pytest.mark.parametrize("args,outcome,words", [
    (swap("#T0000001", ["k-steel-1l"], ["k-glass-1l"]), "refused_precondition", "only a delivered order"),
    (swap("#T0000003", ["k-glass-1l"], ["k-glass-1l"]), "refused_invalid_arg", "choose a different option"),
    (swap("#T0000003", ["k-glass-1l"], ["c-white"]), "refused_invalid_arg", "not a variant of kettle"),
    (swap("#T0000003", ["k-glass-1l"], ["k-steel-2l"]), "refused_precondition", "not available"),
    (swap("#T0000003", ["k-glass-1l", "k-glass-1l"], ["k-red-1l", "k-steel-1l"]), "refused_invalid_arg", "has 1 line"),
    (swap("#T0000003", ["s-silk-red"], ["s-wool-red"], "nope"), "not_in_system", "not one of your"),
])
def test_exchange_preconditions(shop, args, outcome, words):
    refused(shop, "exchange_delivered_order_items", args, outcome, words)


def test_a_gift_card_must_cover_an_exchange_that_costs_more(shop):
    refused(shop, "exchange_delivered_order_items", swap("#T0000009", ["s-wool-red"], ["s-silk-red"], "gift_card_leo"),
            "refused_precondition", "has $10.00, less than the $54.90 price difference", user=LEO)


# --- return_delivered_order_items ------------------------------------------------------------------

@pytest.mark.parametrize("method", ["credit_card_mia", "gift_card_mia_small"])
def test_a_return_goes_to_the_original_method_or_a_gift_card(shop, method):
    engine, _ = shop
    result = ok(shop, "return_delivered_order_items",
                {"order_id": "#T0000003", "item_ids": ["s-silk-red", "k-glass-1l"], "payment_method_id": method})
    o = order(engine, "#T0000003")
    assert (o["status"], o["return_items"], o["return_payment_method_id"]) == (
        "return requested", ["k-glass-1l", "s-silk-red"], method)
    assert "$125.50 will be refunded" in result.message and len(o["payment_history"]) == 1
    assert "(Scarf, Kettle)" in result.message
    assert "exchange_items" not in o and "cancel_reason" not in o


@pytest.mark.parametrize("args,outcome,words", [
    ({"order_id": "#T0000003", "item_ids": ["k-glass-1l"], "payment_method_id": "paypal_mia"}, "refused_precondition",
     "original payment method (credit_card_mia) or to one of your gift cards"),
    ({"order_id": "#T0000001", "item_ids": ["k-steel-1l"], "payment_method_id": "credit_card_mia"},
     "refused_precondition", "only a delivered order"),
    ({"order_id": "#T0000003", "item_ids": ["k-glass-1l", "k-glass-1l"], "payment_method_id": "credit_card_mia"},
     "refused_invalid_arg", "has 1 line(s) of item k-glass-1l"),
    ({"order_id": "#T0000003", "item_ids": ["k-glass-1l"]}, "refused_missing_args", "payment_method_id"),
])
def test_return_preconditions(shop, args, outcome, words):
    refused(shop, "return_delivered_order_items", args, outcome, words)


def test_an_order_with_a_return_shows_what_the_kept_lines_cost(shop):
    _, api = shop
    ok(shop, "return_delivered_order_items",
       {"order_id": "#T0000003", "item_ids": ["k-glass-1l"], "payment_method_id": "credit_card_mia"})
    data = api.call("get_order_details", MIA, {"order_id": "#T0000003"}).data
    assert list(data)[4:6] == ["total", "remaining_items_total"]  # beside the total, where the model looks
    assert data["total"] == 125.5 and data["remaining_items_total"] == 80.0  # the lines are the order's until received
    assert data["return"] == {"items": ["k-glass-1l"], "method": "credit_card_mia"}
