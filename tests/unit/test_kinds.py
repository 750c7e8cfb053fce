"""A swap the request does not ask for (``chops.pipeline.kinds``): refused where the request names another kind of
change, not the swap's, and no feature of the new items; made-up shop data in the retail pack's look-up shapes."""

from __future__ import annotations

import pytest

from apis.retail.registry import OPERATIONS
from chops.domain.outcomes import Outcome
from chops.pipeline.fallbacks import fallback, otherwise
from chops.pipeline.asking import unasked_write
from chops.pipeline.kinds import other_items, unasked_kind, unasked_refusal, unasked_swap
from chops.pipeline.unspoken import unmarked, unspoken
from chops.pipeline.prices import against_price, over_budget
from chops.pipeline.swapped import unkept

EXCHANGE = OPERATIONS["exchange_delivered_order_items"]
MODIFY = OPERATIONS["modify_pending_order_items"]
ORDER = {"order_id": "#T0000003", "status": "delivered",
         "items": [{"item_id": "k-glass-1l", "product_id": "p-kettle", "name": "Kettle",
                    "options": "material: glass, capacity: 1L", "price": 45.5}]}
KETTLE = {"product_id": "p-kettle", "name": "Kettle", "options": "material, capacity",
          "variants": {"k-glass-1l": "glass, 1L; $45.50; available", "k-steel-1l": "steel, 1L; $40.00; available",
                       "k-red-1l": "enamel, 1L; $38.99; available"}}
SWAP = {"order_id": "#T0000003", "item_ids": ["k-glass-1l"], "new_item_ids": ["k-steel-1l"],
        "payment_method_id": "credit_card_mia"}


def _asked(request: str, op=EXCHANGE, args=SWAP, earlier: tuple[str, ...] = ()) -> str | None:
    return unasked_swap(op, args, OPERATIONS.values(), request, [request, *earlier], [ORDER, KETTLE])


def test_the_kind_of_an_operation_is_the_first_word_of_its_name():
    assert [EXCHANGE.kind, MODIFY.kind, OPERATIONS["cancel_pending_order"].kind] == ["exchange", "modify", "cancel"]
    assert type(EXCHANGE)(**{**EXCHANGE.__dict__, "name": "ChangeUploadLimit"}).kind == "change"


@pytest.mark.parametrize("request_text, instead", [
    ("I'd like to return the kettle I received", "return"),
    ("Returning the kettle from #T0000003, please refund my card", "return"),
    ("Please send back everything from that order and cancel the rest", "cancel"),
    ("The kettle I got leaks, so I'd like to send it back", "return"),  # what else a return is called
    ("我收到的水壶漏水，我想退货", "return"),
])
def test_a_swap_for_a_request_of_another_kind_naming_no_feature_is_refused(request_text, instead):
    assert _asked(request_text) == instead


@pytest.mark.parametrize("request_text, earlier", [
    ("I'd like to exchange the kettle I received", ()),  # its own kind named
    ("Swap the kettle for a steel one; if you can't, return it", ()),  # the new item's feature named
    ("Return it? No: make it the steel kettle", ()),
    ("Change the kettle to another one", ()),  # no other kind named ("change" is no write's first word here)
    ("return it otherwise", ("the kettle in steel would be better",)),  # a feature said in an earlier message
    ("A bigger kettle, or else I'll return it", ()),  # compared with the old line
    ("Return the kettle and get me the cheapest one instead", ()),
    ("Return the rest; the kettle to item k-steel-1l", ()),  # the new item's id typed
])
def test_a_swap_the_request_may_ask_for_is_left_alone(request_text, earlier):
    assert _asked(request_text, earlier=earlier) is None


@pytest.mark.parametrize("request_text", [
    "What's the storage of the kettle I ordered?",
    "What's the cheapest kettle available right now?",  # its own comparison asks about the variants (task 89)
    "Is the kettle from #T0000003 still under warranty, and what is it made of?",
    "我买的水壶是什么材质的？",
])
def test_a_swap_for_a_request_that_names_no_change_at_all_is_refused(request_text):
    assert _asked(request_text) == "know something"
    assert _asked(request_text.rstrip("?？") + ", or else switch it") is None  # a word asking for a change
    # A question split off a message is read alone: the rest of the message comparing ("a cheaper one") or naming a
    # feature (steel) does not make it ask for the swap (train task 30).
    whole = f"{request_text} Then exchange it for a cheaper one in steel."
    assert unasked_swap(EXCHANGE, SWAP, OPERATIONS.values(), request_text, [request_text, whole], [ORDER, KETTLE],
                        whole) == "know something"
    # An earlier message of the conversation still counts: "can you do that?" after asking for the steel one, or for
    # a cheaper one.
    assert _asked(request_text, earlier=("Exchange it for a cheaper one in steel",)) is None
    assert _asked(request_text, earlier=("I'd like a cheaper kettle than mine",)) is None


def test_what_a_question_asked_said_again_names_no_change_either():
    question = "What's the material of the kettle I ordered, and how much did I pay for it?"
    again = "The kettle's material and its price, please."
    assert _asked(again, earlier=(question,)) == "know something"
    assert _asked(again) is None  # no question before it: "An identical kettle please" asks for a swap
    assert _asked("Then switch it to the steel one.", earlier=(question,)) is None  # a change named


def test_a_writes_own_word_in_what_is_asked_about_asks_for_no_change():
    from chops.pipeline.asking import only_asks
    ops = OPERATIONS.values()
    assert only_asks("What's the tracking number of my kettle order, and how much did I pay for the kettle?", ops)
    assert only_asks("Where was it sent? 它寄到哪里了？", ops)
    assert only_asks("Has my order with the kettle shipped yet?", ops)
    assert only_asks("Check how much I paid for the order I most recently placed.", ops)  # asked indirectly
    assert only_asks("Please tell me where my kettle order was sent", ops)
    assert not only_asks("Check how much I paid, and cancel the kettle order", ops)
    assert not only_asks("What's the status of my order, and please ship it to my office instead", ops)
    assert not only_asks("How much did I pay? Can you pay the rest with my gift card?", ops)
    # A change only supposed asks what it would do (own6): answered, not proposed; asked for beside it, it is offered.
    assert only_asks("Quick question: how much would I get back if I returned the kettle that came with my scarf?", ops)
    assert only_asks("What would the refund be on the kettle I received?", ops)
    assert only_asks("If I exchanged the scarf for the blue one, how much more would I pay?", ops)
    assert not only_asks("How much would I get back for the kettle? Please return it.", ops)
    assert not only_asks("What would it cost, and could you exchange it for the steel one", ops)
    assert not only_asks("Would you return the kettle I received?", ops)


def test_the_kind_of_another_swap_asks_for_this_one():
    # "exchange" said of a pending order's item change: the customer does not know the shop's names for swaps.
    assert _asked("I want to exchange the kettle in my pending order", op=MODIFY) is None
    assert _asked("I want to cancel the kettle in my pending order", op=MODIFY) == "cancel"


def test_only_a_swap_is_checked_and_the_refusal_is_redone_as_an_invalid_choice():
    ret = {"order_id": "#T0000003", "item_ids": ["k-glass-1l"], "payment_method_id": "credit_card_mia"}
    assert _asked("cancel it, I mean return the kettle", op=OPERATIONS["return_delivered_order_items"], args=ret) \
        is None
    refused = unasked_refusal(EXCHANGE, SWAP, OPERATIONS.values(), "return the kettle", ["return the kettle"],
                           [ORDER, KETTLE])
    assert refused.outcome == Outcome.REFUSED_INVALID_ARG and "you asked to return" in refused.message
    assert refused.operation == "exchange_delivered_order_items"


RETURN = OPERATIONS["return_delivered_order_items"]
RET = {"order_id": "#T0000003", "item_ids": ["k-glass-1l"], "payment_method_id": "credit_card_mia"}


@pytest.mark.parametrize("request_text, op, asked", [
    ("I want to exchange my kettle from #T0000003 the glass one", RETURN, "exchange"),
    ("Could you exchange the kettle in my pending order?", OPERATIONS["cancel_pending_order"], "exchange"),
    ("Please modify the kettle in my pending order", OPERATIONS["cancel_pending_order"], None),  # modify: any change
    ("Exchange the kettle for a steel one", OPERATIONS["modify_pending_order_payment"], "exchange"),
    ("Exchange the kettle and send it to my new address", OPERATIONS["modify_pending_order_address"], None),
    ("Exchange the kettle for a steel one; if that's not possible, return it", RETURN, None),
    ("I'd like my money back for the kettle", RETURN, None),  # no kind named at all
    ("Exchange the kettle for a steel one", EXCHANGE, None),  # the swap itself
    ("No luck then? Please cancel the kettle I just ordered, it belongs with the mug", RETURN, "cancel"),
    ("Go ahead and call off the kettle order", RETURN, "cancel"),  # what else a cancel is called
    ("I'd like to return the kettle", OPERATIONS["cancel_pending_order"], "return"),
    ("Return the kettle, or cancel it if it never shipped", OPERATIONS["cancel_pending_order"], None),
    ("Cancel the kettle I received last week", RETURN, None),  # asked for by the state its order is in
    ("Cancel the kettle and send it to my new address", OPERATIONS["modify_pending_order_address"], None),
    ("Exchange the kettle I received for the steel one", RETURN, "exchange"),  # "received" asks no return of a swap
    ("Exchange the kettle I got for the one in my other order. I don't want to cancel anything", RETURN, "exchange"),
    ("Keep my orders, I don't want to cancel anything, just the kettle's return", RETURN, None),
    ("I do not want to return it; please cancel the kettle order", RETURN, "cancel"),
    # a condition asks for nothing: the kettle's return is its case, the mug's cancel the request
    ("If the kettle is returned, also cancel the mug I just bought", RETURN, "cancel"),
    ("Cancel the mug too if the kettle gets returned", RETURN, "cancel"),
    ("I don't want to return it, no cancel either", OPERATIONS["modify_pending_order_address"], None),
    ("Cancel the kettle order, and move the other one to 12 Elm St", OPERATIONS["modify_pending_order_address"], None),
    ("Cancel the kettle order, and move the other one", OPERATIONS["modify_pending_order_payment"], "cancel"),
    # a word of the return's own argument (its payment method) names no payment change; paying with a card does
    ("Fine, then return both orders to the original payment methods", OPERATIONS["modify_pending_order_payment"],
     "return"),
    ("Return the kettle, and pay my pending order with my card instead", OPERATIONS["modify_pending_order_payment"],
     None),
])
def test_a_write_where_the_request_names_another_kind_and_not_it_is_refused(request_text, op, asked):
    assert unasked_kind(op, request_text, OPERATIONS.values()) == asked


def test_the_state_said_in_the_customers_own_clause_asks_for_the_write():
    said = "cancel the kettle and the mug I received"
    assert unasked_kind(RETURN, "Cancel the kettle from that order", OPERATIONS.values()) == "cancel"
    assert unasked_kind(RETURN, "Cancel the kettle from that order", OPERATIONS.values(), said) is None


def test_a_return_proposed_for_a_cancel_is_redone_as_the_cancel():
    request = "Then cancel the kettle I just bought, since it goes with the mug"
    refused = unasked_refusal(RETURN, RET, OPERATIONS.values(), request, [request], [ORDER, KETTLE],
                              f"I lost my mug. {request}")
    assert refused.message == "you asked to cancel, not to return"
    assert refused.data["other_kind"] is True and refused.data["instead"] == "cancel_pending_order"
    # where the customer's clause says they have it, the return is theirs to ask for
    assert unasked_refusal(RETURN, RET, OPERATIONS.values(), "Cancel the kettle", ["Cancel the kettle"], [ORDER, KETTLE],
                           "Cancel the kettle I received broken, and the mug") is None


@pytest.mark.parametrize("request_text, op, refused", [
    ("What's the price of the kettle I bought, and how much water does it hold?", "modify_pending_order_address", True),
    ("Is my order with the chair still pending?", "cancel_pending_order", True),
    ("How much did I pay for the scarf?", "return_delivered_order_items", True),
    ("One more thing: which two scarves did I order, and what are they made of?", "return_delivered_order_items", True),
    ("What's the status of #T0000002? I'd like to cancel it", "cancel_pending_order", False),
    ("Can you send the chair to my new flat?", "modify_pending_order_address", False),  # a request put as a question
    ("What's the kettle's price? I want my money back for it", "return_delivered_order_items", False),
    ("Where is my order? Please ship it to 12 Oak Road instead", "modify_pending_order_address", False),
    ("What is the cheapest kettle you have?", "exchange_delivered_order_items", False),  # a swap: ``unasked_swap``
])
def test_a_write_for_a_question_that_names_no_change_is_refused(request_text, op, refused):
    assert unasked_write(OPERATIONS[op], request_text, OPERATIONS.values()) is refused


def test_a_return_proposed_for_an_exchange_is_refused_and_not_offered_again():
    request = "I want to exchange my kettle, the glass one"
    refused = unasked_refusal(RETURN, RET, OPERATIONS.values(), request, [request], [ORDER, KETTLE])
    assert refused.outcome == Outcome.REFUSED_INVALID_ARG and refused.message == "you asked to exchange, not to return"
    assert refused.data["other_kind"] is True


@pytest.mark.parametrize("request_text, new, side", [
    ("Exchange the kettle for a steel one, but only if it's cheaper", "k-steel-1l", None),  # $40.00 < $45.50
    ("Swap my kettle for a cheaper one", "k-steel-1l", None),
    ("Change the kettle to a less expensive one", "k-glass-1l", "cheaper"),  # for itself: not cheaper
    ("I'd like a pricier kettle instead", "k-red-1l", "more expensive"),  # $38.99 is not dearer
    ("Exchange the kettle for the enamel one", "k-red-1l", None),  # no price asked for
])
def test_a_swap_against_the_price_the_customer_asked_for_is_refused(request_text, new, side):
    args = {**SWAP, "new_item_ids": [new]}
    assert against_price(EXCHANGE, args, [request_text], [ORDER, KETTLE]) == side
    refused = unasked_refusal(EXCHANGE, args, OPERATIONS.values(), request_text, [request_text], [ORDER, KETTLE])
    assert (refused is None) == (side is None)
    assert side is None or f"a {side} one" in refused.message


def test_a_swap_of_items_the_request_does_not_name_where_it_names_others_of_the_order_is_refused():
    order = {**ORDER, "items": [*ORDER["items"], {"item_id": "s-silk-red", "product_id": "p-scarf", "name": "Scarf",
                                                  "options": "fabric: silk, color: red", "price": 80.0}]}
    sources = [order, KETTLE]
    said = "Just the scarf please, a wool one; leave the kettle alone"
    # Names the kettle too ("leave the kettle alone"): the words alone cannot tell, so nothing is refused.
    assert other_items(EXCHANGE, SWAP, said, sources) is None
    assert other_items(EXCHANGE, SWAP, "Only the scarf, in wool", sources) == "Scarf"
    refused = unasked_refusal(EXCHANGE, SWAP, OPERATIONS.values(), "Only change the scarf, in wool",
                           ["Only change the scarf, in wool"], sources)
    assert refused is not None and "asked about the Scarf" in refused.message
    assert other_items(EXCHANGE, SWAP, "swap the kettle for the steel one", sources) is None  # names it
    assert other_items(EXCHANGE, SWAP, "swap it for the steel one", sources) is None  # names no item at all


@pytest.mark.parametrize("request_text, refused", [
    ("My kettle arrived broken: exchange it for the same item, or else just return it", True),
    ("Can I get the very same one instead? If not, a refund.", True),
    ("An identical kettle please", True),
    ("The kettle I got looks used, so I'd like a new one with the same specs", True),
    ("Send me another kettle, exact same options", True),
    ("It came dented, so I'd like a replacement: exactly the same kettle.", True),  # the product's own name (own5)
    ("The same kettles again, please", True),
    ("The same kettle but in steel", False),
    ("The same one but in steel, please", False),  # the feature that differs is asked for
    ("Exchange the kettle for the same capacity in steel", False),  # "same" of an option, not of the item
    ("Swap the kettle for a steel one", False),
])
def test_a_swap_to_another_variant_where_the_same_item_is_asked_for_is_refused(request_text, refused):
    found = unasked_refusal(EXCHANGE, SWAP, OPERATIONS.values(), request_text, [request_text], [ORDER, KETTLE])
    assert (found is not None) is refused
    assert not refused or ("same item" in found.message and "(material steel)" in found.message)


def test_the_same_item_refused_says_where_it_is_sold_out():
    request_text = "It came dented, so I'd like a replacement: exactly the same kettle."
    sold_out = {**KETTLE, "variants": {**KETTLE["variants"], "k-glass-1l": "glass, 1L; $45.50; NOT available"}}
    found = unasked_refusal(EXCHANGE, SWAP, OPERATIONS.values(), request_text, [request_text], [ORDER, sold_out])
    assert found.message == "you asked for the same item, which is not available now, and this one differs " \
                            "(material steel)"
    found = unasked_refusal(EXCHANGE, SWAP, OPERATIONS.values(), request_text, [request_text], [ORDER, KETTLE])
    assert found.message == "you asked for the same item, and this one differs (material steel)"


def test_the_same_item_is_asked_of_the_product_named_nearest_before_it():
    """One sentence, two products: "new boots with the same specs, and the jigsaw with a fancier theme" asks the same
    item of the boots only (train task 107)."""
    overview = {"orders": [{"order_id": "#T0000003", "names": ["Kettle"]}, {"order_id": "#T0000004",
                                                                           "names": ["Scarf"]}]}
    sources = [overview, ORDER, KETTLE]
    for text, refused in [("A new scarf with the same specs, and the kettle for a steel one", False),
                          ("A kettle with the same specs, and the scarf in wool", True)]:
        found = unasked_refusal(EXCHANGE, SWAP, OPERATIONS.values(), text, [text], sources)
        assert (found is not None) is refused, text


@pytest.mark.parametrize("request_text, new, kept", [
    ("Exchange the kettle for a 2L one with the same material; if not, return it", "k-steel-2l",
     ("material glass", "material steel")),
    ("Exchange the kettle for a 2L one with the same material; if not, return it", "k-glass-2l", None),
    ("A kettle with the same material and capacity but cheaper", "k-steel-1l", ("material glass", "material steel")),
    ("Same capacity and material please, a steel one", "k-steel-1l", ("material glass", "material steel")),
    ("The same material as my other kettle, 2L", "k-steel-2l", None),  # compares with another line
    ("Swap the kettle for a steel one", "k-steel-1l", None),
])
def test_a_swap_changing_an_option_the_customer_said_to_keep_is_refused(request_text, new, kept):
    kettle = {**KETTLE, "variants": {**KETTLE["variants"], "k-glass-2l": "glass, 2L; $52.00; available",
                                     "k-steel-2l": "steel, 2L; $49.00; available"}}
    args = {**SWAP, "new_item_ids": [new]}
    assert unkept(EXCHANGE, args, [request_text], [ORDER, kettle]) == kept
    refused = unasked_refusal(EXCHANGE, args, OPERATIONS.values(), request_text, [request_text], [ORDER, kettle])
    assert (refused is None) == (kept is None)
    if kept is not None:
        assert refused.message.startswith(f"you asked for the same {kept[0]}, and this new item has {kept[1]}")
    if kept is not None and "return it" in request_text:
        assert refused.data["fallback"] == "Return it: the Kettle of #T0000003"


@pytest.mark.parametrize("request_text, new, outside", [
    ("If the steel kettle is less than 30 bucks, exchange my kettle for it; if not, return it", "k-steel-1l",
     ("less than $30.00", "$40.00", "steel, 1L")),
    ("Swap the kettle for the steel one if it's under $40", "k-steel-1l", ("under $40.00", "$40.00", "steel, 1L")),
    ("Swap the kettle for the steel one if it's at most $40", "k-steel-1l", None),
    ("Exchange the kettle for one that costs at least $39", "k-red-1l", ("at least $39.00", "$38.99", "enamel, 1L")),
    ("Exchange the kettle for the enamel one, less than 2 liters", "k-red-1l", None),  # no money: no bound
    ("Exchange the kettle for the steel one. My budget for the scarf is under $10", "k-steel-1l", None),  # another's
    ("My order must fit within $30. Exchange the kettle for the steel one", "k-steel-1l", None),  # the total's bound
])
def test_a_swap_outside_the_price_bound_the_customer_set_is_refused(request_text, new, outside):
    args = {**SWAP, "new_item_ids": [new]}
    order = {**ORDER, "items": [*ORDER["items"], {"item_id": "s-silk-red", "product_id": "p-scarf", "name": "Scarf",
                                                  "options": "fabric: silk", "price": 80.0}]}
    assert over_budget(EXCHANGE, args, [request_text], [order, KETTLE]) == outside
    refused = unasked_refusal(EXCHANGE, args, OPERATIONS.values(), request_text, [request_text], [order, KETTLE])
    assert (refused is None) == (outside is None)
    assert outside is None or refused.message.startswith(
        f"you asked for one {outside[0]}, and this new item ({outside[2]}) costs {outside[1]}")


TWO = {**ORDER, "items": [*ORDER["items"], {"item_id": "s-silk-red", "product_id": "p-scarf", "name": "Scarf",
                                            "options": "fabric: silk, color: red", "price": 80.0}]}
SCARF = {"product_id": "p-scarf", "name": "Scarf", "options": "fabric, color",
         "variants": {"s-silk-red": "silk, red; $80.00; available", "s-wool-red": "wool, red; $60.00; available",
                      "s-silk-blue": "silk, blue; $82.00; NOT available",
                      "s-wool-blue": "wool, blue; $61.00; available"}}
KETTLES = {**KETTLE, "variants": {**KETTLE["variants"], "k-steel-2l": "steel, 2L; $49.00; NOT available"}}
BOTH = {**SWAP, "item_ids": ["k-glass-1l", "s-silk-red"], "new_item_ids": ["k-steel-1l", "s-wool-blue"]}


@pytest.mark.parametrize("request_text, args, lacking", [
    # the one steel 2L kettle is sold out: the kettle's change is off, the scarf's stays
    ("Swap the kettle for a steel one and the scarf for a blue one. If there's no kettle that is steel and 2L, "
     "then I'd rather only exchange the scarf.", BOTH, ("kettle that is steel and 2L", "no kettle that is steel and "
                                                         "2L is available")),
    ("Swap the kettle for a steel one. If you don't have a kettle in steel, just return it", SWAP, None),  # there is
    ("If there isn't a blue silk scarf, exchange the kettle only. Scarf to blue please, kettle to steel.", BOTH,
     ("blue silk scarf", "no blue silk scarf is available")),
    ("If there's no blue scarf, forget it. Swap the kettle for a steel one.", {**SWAP}, None),  # the scarf not swapped
    ("Kettle to steel, scarf to blue. If there's no purple scarf, then only the kettle", BOTH, None),  # no variant is purple: nothing named
    # what to do then is another variant of the same product: the swap may be just that
    ("Kettle to steel, scarf to blue. If there's no kettle that is steel and 2L, I'd take a 1L one.", BOTH, None),
])
def test_a_swap_of_a_product_whose_variant_named_in_a_condition_is_not_there_is_refused(request_text, args, lacking):
    from chops.pipeline.swapped import unmet

    sources = [TWO, KETTLES, SCARF]
    assert unmet(EXCHANGE, args, [request_text], sources) == lacking
    refused = unasked_refusal(EXCHANGE, args, OPERATIONS.values(), request_text, [request_text], sources)
    assert (refused is None) == (lacking is None)
    if lacking is not None and "only exchange the scarf" in request_text:
        # what the customer said for that case: a swap too, which the redo is offered again, about the scarf alone
        assert refused.data["fallback"] == "I'd rather only exchange the scarf: #T0000003"
        assert refused.data["again"] is True


@pytest.mark.parametrize("text, said", [
    ("If the steel kettle is under 30 bucks, swap mine for it; if not, return it.", "if not, return it"),
    ("Exchange it for the same one; otherwise just cancel the order please", "otherwise just cancel the order please"),
    ("I'd like the cheaper lamp, or else a refund to my card!", "or else a refund to my card"),
    ("Switch to the red one if it's in stock. If that's not possible, I'll keep mine", "If that's not possible, "
     "I'll keep mine"),
    ("If there's none in blue, send the scarf back", "If there's none in blue, send the scarf back"),
    ("Cancel just the lamp; if you can't, leave the order as it is", "if you can't, leave the order as it is"),
    ("If cancelling part of an order isn't possible, cancel all of it", "If cancelling part of an order isn't "
     "possible, cancel all of it"),
    ("Swap the kettle for the steel one if it's under $40", None),  # no fallback said
    ("A 2L kettle; if 2L isn't possible, 1.5L; if not, 1L; otherwise no exchange for it",
     "otherwise no exchange for it"),
    ("The 9 inch one, or else 10 inches", None),  # values ranked: alternatives, not what to do instead
    ("Exchange it for the 9 inch one, or else cancel #W0000001", "or else cancel #W0000001"),
    ("Anything else in green?", None),
    ("If there's no kettle that is steel, 2L and cheap, then I'd rather keep it. Thanks", "If there's no kettle that "
     "is steel, 2L and cheap, then I'd rather keep it"),
    ("If you don't have a green one, send it back", "If you don't have a green one, send it back"),
])
def test_what_the_customer_said_to_do_where_their_condition_fails(text, said):
    assert otherwise([text]) == said


def test_a_refused_conditional_swap_says_what_the_customer_asked_for_in_that_case():
    request_text = "Is the steel kettle under $30? If so, exchange my kettle for it; if not, return it"
    args = {**SWAP, "new_item_ids": ["k-steel-1l"]}
    refused = unasked_refusal(EXCHANGE, args, OPERATIONS.values(), request_text, [request_text], [ORDER, KETTLE])
    assert refused.message == 'you asked for one under $30.00, and this new item (steel, 1L) costs $40.00; for that ' \
        'case you said: "if not, return it"'


@pytest.mark.parametrize("said, request_text", [
    ("if not, return it", "Return it: the Kettle of #T0000003"),
    ("otherwise just send it back for a refund", "Just send it back for a refund: the Kettle of #T0000003"),
    ("If there's none in steel, I'll keep mine", "I'll keep mine: the Kettle of #T0000003"),
    ("or else cancel", "Cancel: the Kettle of #T0000003"),
    ("If there's no kettle that is steel, 2L and cheap, then return it", "Return it: the Kettle of #T0000003"),
    ("if not, return it and then refund me", "Return it and then refund me: the Kettle of #T0000003"),
    ("if not, only exchange the kettle's lid", "Only exchange the kettle's lid: #T0000003"),  # named: of its order
    # The kettle kept: the words are about the rest, not about the kettle's order (train task 54).
    ("If there's none, keep the kettle and cancel or return the rest", "Keep the kettle and cancel or return the rest"),
    ("otherwise leave my kettle as it is and return everything else",
     "Leave my kettle as it is and return everything else"),
])
def test_the_customers_words_for_a_failed_condition_become_a_request_about_the_swapped_lines(said, request_text):
    assert fallback(EXCHANGE, SWAP, said, [ORDER, KETTLE]) == request_text


RETURN = OPERATIONS["return_delivered_order_items"]
CANCEL = OPERATIONS["cancel_pending_order"]
# Two delivered orders: a kettle and a scarf in one, a desk lamp in the other; a pending one holding a chair.
ORDERS = [
    {"order_id": "#T0000003", "status": "delivered", "items": [
        {"item_id": "k-glass-1l", "product_id": "p-kettle", "name": "Kettle"},
        {"item_id": "s-silk-red", "product_id": "p-scarf", "name": "Scarf"}]},
    {"order_id": "#T0000010", "status": "delivered", "items": [
        {"item_id": "l-desk-1", "product_id": "p-lamp", "name": "Desk Lamp"}]},
    {"order_id": "#T0000002", "status": "pending", "items": [
        {"item_id": "c-black", "product_id": "p-chair", "name": "Office Chair"}]},
]
OVERVIEW = {"orders": [{"order_id": o["order_id"], "names": [i["name"] for i in o["items"]]} for o in ORDERS]}


def _returns(item: str, order_id: str = "#T0000003") -> dict:
    return {"order_id": order_id, "item_ids": [item], "payment_method_id": "credit_card_mia"}


@pytest.mark.parametrize("request_text, texts, args, refused", [
    # the lamp was asked for; the model returned the kettle
    ("otherwise return mine", ["If the lamp is too dim, otherwise return mine"], _returns("k-glass-1l"),
     ("Desk Lamp", "Kettle")),
    ("Please send back the desk lamp", [], _returns("s-silk-red"), ("Desk Lamp", "Scarf")),
    ("Please send back the desk lamp", [], _returns("l-desk-1", "#T0000010"), None),  # what was asked
    ("Return the kettles", [], _returns("k-glass-1l"), None),  # named in another form
    ("Return everything except the lamp", [], _returns("k-glass-1l"), None),  # takes in what it does not name
    ("Return what's in #T0000003, not the lamp", [], _returns("k-glass-1l"), None),  # the order's id typed
    ("Return it please", ["I'd like to return the kettle"], _returns("k-glass-1l"), None),  # named before
    ("Return my purchase please", [], _returns("k-glass-1l"), None),  # names nothing at all
    ("If it's less than $50, swap it; if not, return it", ["I'd like the desk lamp brighter"], _returns("k-glass-1l"),
     ("Desk Lamp", "Kettle")),  # "less" is no part of "kettle"
    ("I want to cancel the lamp order", [], {"order_id": "#T0000002", "reason": "no longer needed"},
     ("Desk Lamp", "Office Chair")),  # a record by the names it holds
    ("I want to cancel my chair order", [], {"order_id": "#T0000002", "reason": "no longer needed"}, None),
])
def test_a_write_of_products_nobody_named_where_others_were_is_refused(request_text, texts, args, refused):
    op = CANCEL if "reason" in args else RETURN
    sources = [OVERVIEW, *ORDERS]
    found = unasked_refusal(op, args, OPERATIONS.values(), request_text, [request_text, *texts], sources)
    assert (found is None) is (refused is None)
    assert refused is None or found.message == f"you spoke of the {refused[0]}, not of the {refused[1]} this " \
        f"would change"


@pytest.mark.parametrize("request_text, args, refused", [
    ("Send back the desk lamp I got.", _returns("k-glass-1l"), ("Desk Lamp", "Kettle")),  # the first request's
    ("Send back the desk lamp I got.", _returns("l-desk-1", "#T0000010"), None),
    ("Send it back as well.", _returns("k-glass-1l"), None),  # names nothing: the message's words say which
])
def test_a_request_split_off_a_message_names_the_products_its_write_changes(request_text, args, refused):
    """One request of a message names its own products: the others' were named by the message, not by it (train
    task 107: the jigsaw's request got the boots' change)."""
    message = f"Please return the kettle, it leaks. {request_text}"
    texts = [message]
    found = unasked_refusal(RETURN, args, OPERATIONS.values(), request_text, texts, [OVERVIEW, *ORDERS], message)
    assert (found is None) is (refused is None)
    assert refused is None or found.message == f"you spoke of the {refused[0]}, not of the {refused[1]} this " \
        f"would change"
    # the whole message, not split: both named
    assert unasked_refusal(RETURN, args, OPERATIONS.values(), message, texts, [OVERVIEW, *ORDERS]) is None


@pytest.mark.parametrize("request_text, refused", [
    ("Change the chair in my order to red", False),
    ("And my pending order: make its item red", False),  # the record by its state
    ("Make the wristwatch red", True),
])
def test_a_record_named_by_its_state_or_product_is_named(request_text, refused):
    args = {"order_id": "#T0000002", "item_ids": ["c-black"], "new_item_ids": ["c-red"],
            "payment_method_id": "credit_card_mia"}
    texts = [request_text, "Also return the desk lamp"]
    assert (unspoken(MODIFY, args, request_text, texts, [OVERVIEW, *ORDERS]) is not None) is refused


def _two(*items: str, order_id: str = "#T0000003") -> dict:
    return {"order_id": order_id, "item_ids": list(items), "payment_method_id": "credit_card_mia"}


@pytest.mark.parametrize("request_text, args, left", [
    # the kettle only says which order: the scarf is what was asked for
    ("Please return the scarf from my order with the kettle", _two("s-silk-red", "k-glass-1l"), ["s-silk-red"]),
    ("In the order that has the kettle, I'd like to send back the scarf", _two("k-glass-1l", "s-silk-red"),
     ["s-silk-red"]),
    ("From my delivered order containing the kettle: return the scarf", _two("s-silk-red", "k-glass-1l"),
     ["s-silk-red"]),
    ("Return both, the scarf in the order with the kettle", _two("s-silk-red", "k-glass-1l"), ["s-silk-red"]),
    ("How much for the scarf that came with my kettle? Then return it", _two("s-silk-red", "k-glass-1l"),
     ["s-silk-red"]),  # own6
    ("Also the scarf I got together with the kettle", _two("k-glass-1l", "s-silk-red"), ["s-silk-red"]),
    ("Return the kettle, and the scarf that arrived with the kettle", _two("s-silk-red", "k-glass-1l"), None),
    ("Please return the scarf from my order with the kettle", _two("s-silk-red"), None),  # what was asked
    ("Return the scarf and the kettle from my order with the kettle", _two("s-silk-red", "k-glass-1l"), None),
    ("Return my order with the kettle and the scarf", _two("s-silk-red", "k-glass-1l"), None),  # names no other
    ("Return everything in the order with the kettle", _two("s-silk-red", "k-glass-1l"), None),
    ("In the order with the scarf change the kettle to steel", _two("k-glass-1l"), None),
    # the newest message says which not to change, after both were asked for
    ("Actually, only return the scarf, not the kettle", _two("s-silk-red", "k-glass-1l"), ["s-silk-red"]),
    ("Return the scarf except for the kettle", _two("k-glass-1l", "s-silk-red"), ["s-silk-red"]),
    ("Return the scarf and the kettle", _two("s-silk-red", "k-glass-1l"), None),
    ("Return the kettle, not the red one", _two("k-glass-1l"), None),
    ("Not the kettle", _two("s-silk-red", "k-glass-1l"), None),  # names nothing it keeps: asked, not guessed
])
def test_a_product_named_only_to_say_which_order_is_left_out_of_the_write(request_text, args, left):
    fixed = unmarked(RETURN, args, request_text, [request_text], [OVERVIEW, *ORDERS])
    assert (fixed and fixed["item_ids"]) == left and (fixed is None or fixed["order_id"] == "#T0000003")


@pytest.mark.parametrize("texts, args, left", [
    # "it" is the scarf asked about before: the kettle nobody named is left out (own6: every line of the order)
    (["Okay, then please return it", "How much would I get back for the scarf I received?"],
     _two("k-glass-1l", "s-silk-red"), ["s-silk-red"]),
    (["Return the scarf please"], _two("s-silk-red", "k-glass-1l"), ["s-silk-red"]),
    (["Return the scarf and everything else in that order"], _two("s-silk-red", "k-glass-1l"), None),  # takes in all
    (["Return all of it", "How much would I get back for the scarf?"], _two("k-glass-1l", "s-silk-red"), None),
    (["Return the items of #T0000003"], _two("k-glass-1l", "s-silk-red"), None),  # names no product: as it is
    # a line told by its id (or its product's) is named too (train task 21: "change item 1656367028 to …")
    (["Also return item k-glass-1l", "Return the scarf please"], _two("s-silk-red", "k-glass-1l"), None),
    (["Also return p-kettle from that order", "Return the scarf please"], _two("s-silk-red", "k-glass-1l"), None),
])
def test_lines_of_products_no_message_names_are_left_out_beside_those_asked_for(texts, args, left):
    fixed = unmarked(RETURN, args, texts[0], texts, [OVERVIEW, *ORDERS])
    assert (fixed and fixed["item_ids"]) == left


def test_a_swaps_new_item_goes_with_the_line_left_out():
    swap = {"order_id": "#T0000003", "item_ids": ["k-glass-1l", "s-silk-red"], "new_item_ids": ["k-red-1l", "s-blue"],
            "payment_method_id": "credit_card_mia"}
    fixed = unmarked(EXCHANGE, swap, "From my order with the kettle, swap the scarf for a blue one",
                     ["From my order with the kettle, swap the scarf for a blue one"], [OVERVIEW, *ORDERS])
    assert fixed == {**swap, "item_ids": ["s-silk-red"], "new_item_ids": ["s-blue"]}


@pytest.mark.parametrize("request_text, refused", [
    # Nothing said of what the kettle becomes (train task 103: "Change the backpack I got together with the vacuum
    # cleaner", split off "cancel …", had the 1.5B exchange it for a green leather one).
    ("Change the kettle I got together with the mug.", True),
    ("Exchange my kettle, please", True),
    ("Exchange the kettle for a steel one", False),  # a feature of the new item said
    ("Exchange my kettle for one in stainless", False),  # a word of it
    ("Exchange my kettle for a cheaper one", False),  # compared with the old line
    ("Exchange the kettle for item k-steel-1l", False),  # its id typed
])
def test_a_swap_to_options_the_customer_never_spoke_of_is_refused(request_text, refused):
    steel = {**KETTLE, "variants": {**KETTLE["variants"], "k-steel-1l": "stainless steel, 1L; $40.00; available"}}
    found = unasked_refusal(EXCHANGE, SWAP, OPERATIONS.values(), request_text, [request_text], [ORDER, steel])
    assert (found is not None and "not said what you would like the Kettle changed to" in found.message) is refused
    assert refused or found is None
