"""One new item of each product a swap is asked for, of every one of them when the record is known
(``chops.pipeline.each``)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from apis.retail.registry import OPERATIONS
from chops.pipeline.choices import arg_options
from chops.pipeline.each import EachOf, asked_to_change
from chops.pipeline.schemas import plan_schema
from chops.pipeline.walk import records

KINDS = ("return", "cancel")
ORDER = {"order_id": "#W1000001", "status": "delivered",
         "items": [{"item_id": "111", "product_id": "p1", "name": "Desk Lamp"},
                   {"item_id": "222", "product_id": "p3", "name": "Electric Kettle"},
                   {"item_id": "777", "product_id": "p4", "name": "Yoga Mat"}]}
LAMP = {"product_id": "p1", "name": "Desk Lamp", "variants": {"111": "white; $10.00; available",
                                                              "333": "red; $10.00; available"}}
KETTLE = {"product_id": "p3", "name": "Electric Kettle", "variants": {"222": "1 L; $5.00; available",
                                                                      "555": "2 L; $6.00; available"}}
PROFILE = {"user_id": "u1", "orders": ["#W1000001"], "payment_methods": [{"id": "gift_card_1", "source": "gift_card"}]}
SWAP = OPERATIONS["exchange_delivered_order_items"]


@pytest.mark.parametrize("message", [
    "exchange the desk lamp and the kettle",
    "For the kettle, keep the colour but make it bigger; the lamp in red",
    "I'd like a bigger kettle. The kettle I don't care about the price",
    "could you swap my lamp plus my kettle?",
])
def test_a_product_named_in_a_clause_of_its_own_is_asked_to_change(message):
    assert asked_to_change(message, "Electric Kettle", KINDS)


@pytest.mark.parametrize("message", [
    "exchange the desk lamp, but not the kettle",
    "Don't exchange the kettle; just the lamp",
    "swap the lamp and keep the kettle as it is",
    "the lamp in red, and leave my kettle alone",
    "exchange the lamp and return the kettle",
    "everything except the kettle",
    "exchange the desk lamp",
])
def test_a_product_negated_kept_given_another_kind_or_not_named_is_not(message):
    assert not asked_to_change(message, "Electric Kettle", KINDS)


def each(message):
    options = arg_options((SWAP,), [PROFILE, ORDER, LAMP, KETTLE], (), message)
    return options, next(g for _, arg, _, g in options if arg == "new_item_ids")


def test_every_product_of_the_known_order_the_message_asks_to_change_is_taken():
    options, groups = each("exchange the desk lamp for a red one and the kettle for the 2 L one")
    assert groups == EachOf((("333",), ("555",)), every=True)
    # The grammar the engine decodes (the model's JSON is validated as a plain list of offered values after it).
    tuples = [t["prefixItems"] for t in _new_items_schema(plan_schema((SWAP,), True, options)) if "prefixItems" in t]
    assert tuples == [[{"enum": ["333"]}, {"enum": ["555"]}]]  # not [lamp] or [kettle] alone (train tasks 0, 58)


def _new_items_schema(schema):
    """The alternatives of the swap's ``new_item_ids`` in a plan schema."""
    return [option for node in records(schema.model_json_schema())
            for option in ((node.get("properties") or {}).get("new_item_ids") or {}).get("anyOf", [])]


def test_a_product_not_asked_for_or_two_orders_holding_them_leave_the_selection_to_the_model():
    _, groups = each("exchange the desk lamp for a red one, but not the kettle")
    assert groups == EachOf((("333",), ("555",)), every=False)
    two_orders = {**PROFILE, "orders": ["#W1000001", "#W1000002"]}
    options = arg_options((SWAP,), [two_orders, ORDER, {**ORDER, "order_id": "#W1000002"}, LAMP, KETTLE], (),
                          "exchange the desk lamp for a red one and the kettle for the 2 L one")
    assert next(g for _, arg, _, g in options if arg == "new_item_ids").every is False  # both read: which?
    options = arg_options((SWAP,), [two_orders, ORDER, LAMP, KETTLE], (),
                          "exchange the desk lamp for a red one and the kettle for the 2 L one")
    assert next(g for _, arg, _, g in options if arg == "new_item_ids").every is True  # one read: that one
