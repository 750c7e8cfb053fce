"""Which one? (``chops.pipeline.which``): a write of one line of a product the customer holds several of, with nothing
said to tell them apart, is asked about; made-up shop data in the retail pack's look-up shapes."""

from __future__ import annotations

import pytest

from apis.retail.registry import OPERATIONS
from chops.pipeline.which import meant, unsure

RETURN = OPERATIONS["return_delivered_order_items"]
EXCHANGE = OPERATIONS["exchange_delivered_order_items"]
CANCEL = OPERATIONS["cancel_pending_order"]


def _status(order_id: str, status: str, names: list[str], city: str) -> dict:
    return {"order_id": order_id, "status": status, "names": names,
            "address": {"address1": "1 Main St", "city": city, "state": "TX", "zip": "70000"}}


def _line(item_id: str, name: str, options: str) -> dict:
    return {"item_id": item_id, "product_id": f"p-{name.split()[0].lower()}", "name": name, "options": options,
            "price": 100.0}


PROFILE = {"user_id": "mia", "orders": ["#T0000011", "#T0000012", "#T0000013"], "statuses": [
    _status("#T0000011", "delivered", ["Blender", "Vacuum Cleaner", "Vacuum Cleaner"], "Austin"),
    _status("#T0000012", "delivered", ["Blender", "Desk Lamp"], "Denver"),
    _status("#T0000013", "pending", ["Desk Lamp"], "Austin")]}
ORDER_11 = {"order_id": "#T0000011", "status": "delivered", "items": [
    _line("b-red", "Blender", "color: red, speed: 3"),
    _line("v-robot", "Vacuum Cleaner", "type: robotic, bag: bagless"),
    _line("v-canister", "Vacuum Cleaner", "type: canister, bag: bagless")]}
ORDER_12 = {"order_id": "#T0000012", "status": "delivered", "items": [
    _line("b-white", "Blender", "color: white, speed: 3"), _line("l-desk", "Desk Lamp", "color: black")]}


def _ret(order_id: str, *items: str) -> dict:
    return {"order_id": order_id, "item_ids": list(items), "payment_method_id": "paypal_mia"}


def test_one_of_two_lines_of_a_product_in_one_order_is_asked_about_with_each_described():
    request = "I want to return the vacuum cleaner from my recent order"
    which = unsure(RETURN, _ret("#T0000011", "v-canister"), request, [request], [PROFILE, ORDER_11])
    assert which is not None and which.name == "Vacuum Cleaner" and which.unset == ("item_ids",)
    assert which.options == ("the Vacuum Cleaner of #T0000011 (type: robotic, bag: bagless)",
                             "the Vacuum Cleaner of #T0000011 (type: canister, bag: bagless)")
    result = which.result(RETURN.name)
    assert result.outcome == "refused_missing_args" and result.data["options"] == list(which.options)


def test_a_product_two_orders_hold_asks_which_order_too_even_where_one_was_not_read():
    request = "Please return the blender I received"
    which = unsure(RETURN, _ret("#T0000011", "b-red"), request, [request], [PROFILE, ORDER_11])
    assert which.unset == ("order_id", "item_ids")
    assert which.options == ("the Blender of #T0000011 (color: red, speed: 3)", "the Blender of #T0000012")


@pytest.mark.parametrize("request_text, items", [
    ("Return the robotic vacuum cleaner", ("v-robot",)),  # a feature one has and the other lacks
    ("Return both vacuum cleaners", ("v-robot",)),
    ("Send back the two vacuum cleaners", ("v-canister",)),
    ("Return the cheaper vacuum cleaner", ("v-robot",)),
    ("Return the vacuum cleaners and the blender", ("v-robot", "v-canister")),  # every line of it taken
])
def test_lines_the_customer_tells_apart_or_takes_all_of_are_not_asked_about(request_text, items):
    assert unsure(RETURN, _ret("#T0000011", *items), request_text, [request_text], [PROFILE, ORDER_11]) is None


def test_an_order_typed_narrows_the_candidates_to_its_own_lines():
    request = "Return the vacuum cleaner from #T0000011"  # the order named, its two vacuum cleaners are still two
    which = unsure(RETURN, _ret("#T0000011", "v-canister"), request, [request], [PROFILE, ORDER_11, ORDER_12])
    assert which is not None and which.unset == ("item_ids",) and len(which.options) == 2
    request = "Return the blender from #T0000011"
    assert unsure(RETURN, _ret("#T0000011", "b-red"), request, [request], [PROFILE, ORDER_11, ORDER_12]) is None


@pytest.mark.parametrize("request_text", [
    "Return the blender from my last order",
    "Return the blender I had sent to Denver",
    "Return the blender of order #T0000012",
    "Return the white blender",
])
def test_an_order_named_by_its_place_its_address_or_its_id_or_a_line_by_its_options_is_not_asked_about(
        request_text):
    assert unsure(RETURN, _ret("#T0000012", "b-white"), request_text, [request_text],
                  [PROFILE, ORDER_11, ORDER_12]) is None


def test_a_product_one_order_in_the_writes_state_holds_is_not_asked_about():
    request = "Return my desk lamp"  # the other desk lamp is in a pending order, which a return does not take
    assert unsure(RETURN, _ret("#T0000012", "l-desk"), request, [request], [PROFILE, ORDER_12]) is None


def test_a_write_without_lines_is_not_asked_about():
    request = "cancel my order"
    assert unsure(CANCEL, {"order_id": "#T0000013", "reason": "no longer needed"}, request, [request],
                  [PROFILE]) is None


def test_the_line_the_customer_described_replaces_the_one_the_model_took_in_the_same_order():
    texts = ["The robotic one", "I want to return a vacuum cleaner and the blender"]
    assert meant(RETURN, _ret("#T0000011", "b-red", "v-canister"), texts, [PROFILE, ORDER_11]) == \
        _ret("#T0000011", "b-red", "v-robot")
    assert meant(RETURN, _ret("#T0000011", "v-robot"), texts, [PROFILE, ORDER_11]) is None  # already that one
    assert meant(RETURN, _ret("#T0000011", "v-canister"), ["return a vacuum"], [PROFILE, ORDER_11]) is None


def test_a_swaps_old_line_is_asked_about_and_its_new_item_kept():
    request = "Exchange my vacuum cleaner for a bagged one"
    args = {"order_id": "#T0000011", "item_ids": ["v-robot"], "new_item_ids": ["v-robot-bagged"],
            "payment_method_id": "paypal_mia"}
    which = unsure(EXCHANGE, args, request, [request], [PROFILE, ORDER_11])
    assert which is not None and which.unset == ("item_ids",)


def test_the_line_described_in_another_order_moves_a_one_line_write_there():
    texts = ["The white one", "Please return the blender I received"]
    assert meant(RETURN, _ret("#T0000011", "b-red"), texts, [PROFILE, ORDER_11, ORDER_12]) == \
        _ret("#T0000012", "b-white")
    # a write of lines of several products stays in its order
    assert meant(RETURN, _ret("#T0000011", "b-red", "v-robot"), texts, [PROFILE, ORDER_11, ORDER_12]) is None


def test_words_about_a_swaps_new_item_tell_no_old_line_apart():
    white = {"product_id": "p-blender", "name": "Blender",
             "variants": {"b-white-5": "white, speed: 5; $120.00; available"}}
    request = "Exchange my blender for a white one with 5 speeds"  # white: the new one, and the line of #T0000012
    args = {"order_id": "#T0000011", "item_ids": ["b-red"], "new_item_ids": ["b-white-5"],
            "payment_method_id": "paypal_mia"}
    sources = [PROFILE, ORDER_11, ORDER_12, white]
    assert unsure(EXCHANGE, args, request, [request], sources) is not None
    assert meant(EXCHANGE, args, [request], sources) is None


def test_an_option_said_to_stay_tells_the_old_line_apart_though_the_new_item_has_it():
    five = {"order_id": "#T0000012", "status": "delivered", "items": [
        _line("b-white", "Blender", "color: white, speed: 5"), _line("l-desk", "Desk Lamp", "color: black")]}
    red = {"product_id": "p-blender", "name": "Blender", "options": "color, speed",
           "variants": {"b-red-5": "red, 5; $120.00; available", "b-red": "red, 3; $100.00; available"}}
    args = {"order_id": "#T0000011", "item_ids": ["b-red"], "new_item_ids": ["b-red-5"],
            "payment_method_id": "paypal_mia"}
    sources = [PROFILE, ORDER_11, five, red]
    # "5-speed" is the new item's speed too, but the speed stays: it describes the old line, #T0000012's
    request = "Change my 5-speed blender to a red one, same speed"
    assert meant(EXCHANGE, args, [request], sources) == {**args, "order_id": "#T0000012", "item_ids": ["b-white"]}
    assert meant(EXCHANGE, args, ["Change my blender to a red 5-speed one"], sources) is None  # the new one's


def test_products_said_to_be_in_one_order_name_the_order_holding_them_all():
    request = "Return the blender and the desk lamp, they came in the same order"
    assert unsure(RETURN, _ret("#T0000012", "b-white", "l-desk"), request, [request],
                  [PROFILE, ORDER_11, ORDER_12]) is None


def test_a_candidate_is_described_by_its_options_not_by_whether_its_variant_is_sold_now():
    blender = {"product_id": "p-blender", "name": "Blender",
               "variants": {"b-red": "color: red, speed: 3; $100.00; NOT available",
                            "b-white": "color: white, speed: 3; $100.00; available"}}
    request = "Please return the blender I received"
    which = unsure(RETURN, _ret("#T0000011", "b-red"), request, [request], [PROFILE, ORDER_11, ORDER_12, blender])
    assert which.options == ("the Blender of #T0000011 (color: red, speed: 3)",
                             "the Blender of #T0000012 (color: white, speed: 3)")


def test_a_line_proposed_for_itself_like_one_in_an_order_not_read_takes_that_ones_item():
    """"Change the desk lamp I just ordered to the same kind as the one I already received": the order holding the
    received lamp is read (the turn's look-ups start after the last commit) and its item is the new one (train task
    23: the pending grill was proposed for itself)."""
    from chops.domain.outcomes import OperationResult, Outcome
    from chops.pipeline.context import Step
    from chops.pipeline.lookups import Reader
    from chops.pipeline.which import read_elsewhere

    pending = {"order_id": "#T0000013", "status": "pending", "items": [_line("l-pend", "Desk Lamp", "color: red")]}

    class Api:
        def call(self, name, nickname, args):
            data = ORDER_12 if name == "get_order_details" and args == {"order_id": "#T0000012"} else None
            return OperationResult(operation=name, outcome=Outcome.OK if data else Outcome.NOT_IN_SYSTEM, message="",
                                   data=data)

    modify = OPERATIONS["modify_pending_order_items"]
    args = {"order_id": "#T0000013", "item_ids": ["l-pend"], "new_item_ids": ["l-pend"], "payment_method_id": "p"}
    write = Step(operation=modify.name, proposed_args=args, args=dict(args), writes=True)
    reader = Reader(Api(), OPERATIONS, "mia", [], [PROFILE, pending])
    request = "Change the desk lamp I just ordered to the same kind as the one I already received."
    moved = read_elsewhere(reader, OPERATIONS, [write], request, [request])
    assert write.args["new_item_ids"] == ["l-desk"] and moved[0]["args"] == write.args
    assert [s.args for s in reader.fresh] == [{"order_id": "#T0000012"}]  # the received lamp's order, read once


MODIFY = OPERATIONS["modify_pending_order_items"]
LAPTOPS = {"order_id": "#T0000013", "status": "pending", "items": [
    _line("lap-13", "Laptop", "screen size: 13-inch, processor: i5, color: silver"),
    _line("lap-17", "Laptop", "screen size: 17-inch, processor: i7, color: black")]}
NEW_17 = {"product_id": "p-laptop", "name": "Laptop",
          "variants": {"lap-17-i9": "17-inch, i9, silver; $2500.00; available"}}


@pytest.mark.parametrize("request_text, line", [
    # Said before the product's name, a feature describes the line held, though the new item has it too and the
    # other line has what is asked for (train task 35: the 1.5B changed the 13-inch one).
    ("Change the 17-inch laptop in my other order to the 13-inch version, i5 over i7", "lap-17"),
    ("my black laptop should be the silver one", "lap-17"),
    ("Please make my 13-inch laptop a 17-inch one", None),  # the line taken is the one described
])
def test_a_feature_said_before_the_products_name_tells_which_line_is_meant(request_text, line):
    args = {"order_id": "#T0000013", "item_ids": ["lap-13"], "new_item_ids": ["lap-17-i9"],
            "payment_method_id": "paypal_mia"}
    profile = {**PROFILE, "statuses": [_status("#T0000013", "pending", ["Laptop", "Laptop"], "Austin")]}
    sources = [profile, LAPTOPS, NEW_17]
    found = meant(MODIFY, args, [request_text], sources)
    assert (found is None) if line is None else (found == {**args, "item_ids": [line]})
    assert unsure(MODIFY, args, request_text, [request_text], sources) is None  # told apart: nothing to ask


def test_a_feature_said_as_what_is_wanted_tells_no_line_apart():
    args = {"order_id": "#T0000013", "item_ids": ["lap-13"], "new_item_ids": ["lap-17-i9"],
            "payment_method_id": "paypal_mia"}
    profile = {**PROFILE, "statuses": [_status("#T0000013", "pending", ["Laptop", "Laptop"], "Austin")]}
    for text in ("Change my laptop to the 17-inch laptop", "swap my laptop for the 17-inch one",
                 "I'd like a laptop with the 17-inch screen instead"):
        assert meant(MODIFY, args, [text], [profile, LAPTOPS, NEW_17]) is None, text
