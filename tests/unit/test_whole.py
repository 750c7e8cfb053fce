"""A write of a whole record asked for a part of it (``chops.pipeline.whole``): "cancel the skateboard in my order" is
not the order's cancel; made-up shop data in the retail pack's look-up shapes."""

from __future__ import annotations

import pytest

from apis.retail.registry import OPERATIONS
from chops.domain.outcomes import Outcome
from chops.pipeline.kinds import unasked_refusal
from chops.pipeline.whole import partial

CANCEL = OPERATIONS["cancel_pending_order"]
RETURN = OPERATIONS["return_delivered_order_items"]
PROFILE = {"user_id": "mia", "orders": ["#T0000021", "#T0000022"], "statuses": [
    {"order_id": "#T0000021", "status": "pending", "names": ["Helmet", "Skateboard", "Bike Light"]},
    {"order_id": "#T0000022", "status": "pending", "names": ["Desk Lamp"]}]}
ARGS = {"order_id": "#T0000021", "reason": "no longer needed"}


@pytest.mark.parametrize("request_text", [
    "Cancel the skateboard, just the skateboard, in one of my orders",
    "I'd like to cancel the helmet I ordered yesterday",
    "Please cancel only the skateboard and the bike light in my pending order",
    "Cancel the one with the stripes, the skateboard",  # no "in it": a product told by a feature
    # The others named only as not to change (train task 31: the order holding the boots and the kettle was cancelled)
    "Cancel the skateboard and the bike light but keep the helmet",
    "Cancel the skateboard, leaving the helmet and the bike light; if you can't, don't do anything on that order",
])
def test_a_cancel_asked_for_some_items_of_an_order_is_refused_with_what_else_it_holds(request_text):
    named, others = partial(CANCEL, ARGS, request_text, [PROFILE])
    assert named and others and set(named.split(", ")) | set(others.split(", ")) == {"Helmet", "Skateboard",
                                                                                     "Bike Light"}


@pytest.mark.parametrize("request_text", [
    "Cancel my pending order, I don't need the skateboard any more",  # the order itself is what is cancelled
    "Cancel the order with the skateboard",
    "Please cancel the one with the skateboard in it",  # "the one": the order asked about
    "Please cancel the skateboard order",
    "The skateboard out, or else that order cancelled",
    "Cancel order #T0000021, the skateboard came from elsewhere",  # its id typed
    "Cancel the skateboard; if that's not possible, cancel the whole order",
    "Cancel everything: the helmet, the skateboard and the bike light",
    "Cancel the desk lamp",  # the lamp's order holds nothing else (see the second record)
])
def test_a_request_for_the_record_itself_or_all_it_holds_is_left_alone(request_text):
    args = {**ARGS, "order_id": "#T0000022"} if "lamp" in request_text else ARGS
    assert partial(CANCEL, args, request_text, [PROFILE]) is None


def test_the_message_a_request_was_split_off_may_name_the_record_itself():
    message = "Two changes to my order with the skateboard: ship it to 5 Elm St, and make the skateboard a 28 inch one"
    ship = OPERATIONS["modify_pending_order_address"]
    args = {"order_id": "#T0000021", "address1": "5 Elm St", "address2": "", "city": "Aurora", "state": "CO",
            "country": "USA", "zip": "80012"}
    request = "Ship the skateboard to 5 Elm St."
    assert partial(ship, args, request, [PROFILE]) is not None  # the request alone names the skateboard only
    assert partial(ship, args, request, [PROFILE], message) is None
    assert partial(CANCEL, ARGS, "Cancel the skateboard.", [PROFILE], "Cancel the skateboard, please.") is not None


def test_a_write_of_lines_is_never_a_part_of_a_whole():
    request = "return the skateboard"
    args = {"order_id": "#T0000021", "item_ids": ["sk-1"], "payment_method_id": "paypal_mia"}
    assert partial(RETURN, args, request, [PROFILE]) is None


def test_the_refusal_is_told_as_it_is_or_with_the_fallback_the_customer_gave():
    request = "Cancel just the skateboard please"
    told = unasked_refusal(CANCEL, ARGS, OPERATIONS.values(), request, [request], [PROFILE])
    assert told.outcome == Outcome.REFUSED_PRECONDITION and told.data["final"] is True
    assert told.message == ("cancel your order applies to the whole order, not to single items: #T0000021 also "
                            "holds the Helmet, Bike Light, so it cannot be done for the Skateboard alone.")
    request = "Cancel just the skateboard; if you can't, just leave the order as it is"
    told = unasked_refusal(CANCEL, ARGS, OPERATIONS.values(), request, [request], [PROFILE])
    assert "final" not in told.data and told.data["fallback"].startswith("Just leave the order as it is")
