"""An address the customer names from their data, taken whole (``chops.pipeline.completion``): the parts a plan
leaves empty come from the one address of the profile or the look-ups that the parts it gives agree with; when
none agrees, or several different ones do, the plan stays as the model wrote it. And a payment method the customer
did not name is asked for, not chosen for them."""

from __future__ import annotations

import pytest

from apis.cphos.registry import OPERATIONS as CPHOS_OPERATIONS
from apis.retail.registry import OPERATIONS
from chops.pipeline.choices import arg_options
from chops.pipeline.pairing import for_themselves
from chops.pipeline.completion import (completed, named_options, named_record, repeated, retyped, still_replaced,
                                      unnamed)
from tests.unit.pipeline_support import answering, call, to_system, verdict
from tests.unit.retail_support import MIA, order
from tests.unit.test_retail_agent import shop  # noqa: F401  (fixture)

SHIP = OPERATIONS["modify_pending_order_address"]
PAY = OPERATIONS["modify_pending_order_payment"]
MIA_METHODS = {"payment_methods": [{"id": "gift_card_mia", "source": "gift_card", "balance": 100.0},
                                   {"id": "credit_card_mia", "source": "credit_card", "card": "visa ending 1111"}]}
HOME = {"address1": "12 Birch Lane", "address2": "Flat 3", "city": "Springfield", "country": "USA", "state": "OR",
        "zip": "97477"}
CABIN = {"address1": "400 Lake Road", "address2": "Cabin B", "city": "Bend", "country": "USA", "state": "OR",
         "zip": "97701"}
OTHER_BEND = {**CABIN, "address1": "9 Canyon Way", "address2": "Unit 1", "zip": "97702"}
PROFILE = {"user_id": "u1", "address": HOME, "statuses": [{"order_id": "#W1", "status": "pending", "address": HOME}]}
ORDER = {"order_id": "#W2", "status": "delivered", "address": CABIN, "items": []}
EMPTY = dict.fromkeys(HOME)


def test_the_parts_left_empty_come_from_the_one_address_the_given_parts_match():
    args = {"order_id": "#W1", **EMPTY, "address1": "400 lake  road", "city": "Bend"}
    assert completed(SHIP, args, [PROFILE, ORDER]) == {"order_id": "#W1", **CABIN}  # in the record's spelling
    # ... but a part the customer typed stays as they wrote it
    assert completed(SHIP, args, [PROFILE, ORDER], typed=lambda v: v == "400 lake  road")["address1"] == "400 lake  road"
    # a blank part is empty too
    blank = {"order_id": "#W1", **HOME, "address2": " ", "zip": ""}
    assert completed(SHIP, blank, [PROFILE]) == {"order_id": "#W1", **HOME}
    # the same address in two places is one record
    assert completed(SHIP, {"order_id": "#W1", **EMPTY, "zip": "97477"}, [PROFILE, PROFILE]) == {"order_id": "#W1",
                                                                                               **HOME}


def test_parts_mixed_from_two_addresses_become_the_one_most_of_them_come_from():
    # The new city with the old second line: the cabin's address agrees with three of the four parts given.
    mixed = {"order_id": "#W1", **EMPTY, "address2": "Flat 3", "city": "Bend", "state": "OR", "zip": "97701"}
    assert completed(SHIP, mixed, [PROFILE, ORDER]) == {"order_id": "#W1", **CABIN}
    # Half of them is not most: nothing is guessed.
    assert completed(SHIP, {"order_id": "#W1", **EMPTY, "address2": "Flat 3", "city": "Bend"}, [PROFILE, ORDER]) is None
    # A part the customer typed is kept, and a record must agree with it: a new street in Bend is a new address.
    new_street = {"order_id": "#W1", **CABIN, "address1": "77 Pine Court", "address2": None}
    assert completed(SHIP, new_street, [PROFILE, ORDER], typed=lambda v: v == "77 Pine Court") is None
    assert completed(SHIP, new_street, [PROFILE, ORDER]) == {"order_id": "#W1", **CABIN}  # copied, not typed


def test_nothing_is_filled_unless_exactly_one_address_agrees():
    two_in_bend = {"order_id": "#W1", **EMPTY, "city": "Bend"}
    assert completed(SHIP, two_in_bend, [PROFILE, ORDER, {"address": OTHER_BEND}]) is None  # which one?
    assert completed(SHIP, {"order_id": "#W1", **EMPTY, "address1": "1 New Street", "city": "Bend"},
                     [PROFILE, ORDER]) is None  # a new address, typed in part: not an old one
    assert completed(SHIP, {"order_id": "#W1", **EMPTY}, [PROFILE, ORDER]) is None  # nothing given
    assert completed(SHIP, {"order_id": "#W1", **CABIN}, [PROFILE, ORDER]) is None  # nothing left to fill
    assert completed(SHIP, {"order_id": "#W1", **EMPTY, "city": "Bend"}, [PROFILE]) is None  # nothing agrees


def test_an_optional_part_repeating_another_that_the_customer_wrote_once_is_left_empty():
    said = ["Move my default address to 101 Highway, New York, NY 10001 please"]
    new = {"address1": "101 Highway", "city": "New York", "state": "NY", "country": "USA", "zip": "10001"}
    home = OPERATIONS["modify_user_address"]
    assert repeated(home, {**new, "address2": "New York"}, said) == {**new, "address2": ""}
    assert repeated(home, {**new, "address2": ""}, said) is None  # nothing repeated
    part = ["Move my default address to 101 Highway, New York, NY 10001", *said]  # a request split off the message
    assert repeated(home, {**new, "address2": "New York"}, part) == {**new, "address2": ""}
    # Written twice by the customer (a street named after the city), or a required part: kept.
    twice = ["It's 12 Elm St, Springfield, Springfield, IL 62701"]
    assert repeated(home, {**new, "address2": "Springfield", "city": "Springfield"}, twice) is None
    assert repeated(home, {**new, "state": "New York"}, said) is None
    # Each piece of the second line one of the other parts, written once (train task 59).
    elm = ["Why is it still pending? Ship #W1 to my new home: 1234 Elm St, Springfield, IL, 62701"]  # "IL" in "still"
    to = {"address1": "1234 Elm St", "city": "Springfield", "state": "IL", "country": "USA", "zip": "62701"}
    assert repeated(home, {**to, "address2": "Springfield, IL, 62701"}, elm) == {**to, "address2": ""}
    assert repeated(home, {**to, "address2": "Unit 4, Springfield"}, elm) is None  # a piece of its own


def test_a_part_typed_with_other_numbers_in_the_same_words_is_taken_as_typed():
    home = OPERATIONS["modify_user_address"]
    said = ["I think I typed my address wrong. It should be 14 Birch Lane, Flat 3, Springfield, OR 97477."]
    assert retyped(home, HOME, said) == {**HOME, "address1": "14 Birch Lane"}  # not the 12 of their data
    assert retyped(SHIP, {**HOME, "order_id": "#W1"}, ["flat 5 please, same street"]) == {
        **HOME, "order_id": "#W1", "address2": "flat 5"}
    assert retyped(SHIP, {**HOME, "order_id": "#W1"}, ["Flat 5 and flat 7"]) is None  # two: which one is unsure
    assert retyped(home, HOME, ["12 Birch Lane is right, only the zip is 97478"]) is None  # typed as it is: kept
    assert retyped(home, {**HOME, "zip": "97478"}, ["the zip is 97479"]) is None  # a number alone has no words


def test_an_address_named_as_a_place_is_that_record_not_the_one_the_model_copied():
    metro = {"address1": "5 Harbor St", "address2": "Apt 2", "city": "New York", "country": "USA", "state": "NY",
             "zip": "10001", "nickname": "NYC"}
    third = {"order_id": "#W3", "status": "pending", "address": metro}
    profile = {**PROFILE, "statuses": [*PROFILE["statuses"], third]}
    sources, home = [profile, ORDER], {**HOME, "order_id": "#W1"}
    want = {**{k: v for k, v in metro.items() if k != "nickname"}, "order_id": "#W1"}
    for text in ["Ship #W1 to my NYC address please", "send it to my new york home instead",
                 "Change the address to my New York one, it's on another order", "ship it to my NY apartment"]:
        assert named_record(SHIP, home, sources, text) == want, text
    cabin = {**{k: v for k, v in CABIN.items()}, "order_id": "#W1"}
    assert named_record(SHIP, home, sources, "ship #W1 to the Bend address") == cabin  # the order's look-up
    assert named_record(SHIP, want, sources, "ship it to my NYC address") is None  # already that one
    for text in ["#W1 went to Springfield by mistake, use my other address",  # where it is now, no place word
                 "my NYC address or the Bend one, whichever is faster",  # two named: unsure
                 "the one in my nyc account", "use my Springfield address"]:  # "nyc" not as written; already it
        assert named_record(SHIP, home, sources, text) is None, text
    for text in ["For order #W1, change the address to be the same as order #W3", "ship #W1 like the one on #W3"]:
        assert named_record(SHIP, home, sources, text) == want, text  # the address of order #W3
    assert named_record(SHIP, home, sources, "same as order #W9") is None  # no such order among theirs
    # Where the order changed is now: never the change. Told this, the 1.5B's home address was replaced by #W3's own.
    going = "My pending order #W3 is going to a New York address, but I want it delivered to my home on my account"
    assert named_record(SHIP, {**HOME, "order_id": "#W3"}, sources, going) is None
    assert named_record(SHIP, {**HOME, "order_id": "#W3"}, sources, going.replace("home on", "Bend place on")) == {
        **CABIN, "order_id": "#W3"}
    two_bends = [profile, ORDER, {"address": OTHER_BEND}]
    assert named_record(SHIP, home, two_bends, "to my Bend address") is None  # two addresses in Bend


def test_operations_without_record_groups_are_left_alone():
    assert completed(OPERATIONS["cancel_pending_order"], {"order_id": "#W1", "reason": None}, [PROFILE]) is None
    assert all(not op.choice_records() for op in CPHOS_OPERATIONS.values())
    assert set(OPERATIONS["modify_user_address"].choice_records()["address"]) == set(HOME)


def test_my_default_address_is_proposed_whole_though_the_model_copied_only_the_street(shop):  # noqa: F811
    agent, engine, llm = shop
    to_system(llm)
    # The model copies the street and makes up the second line: grounding drops that, the profile's address fills
    # it and the rest.
    llm.enqueue("executor", call("get_order_details", order_id="#T0000001"))
    llm.enqueue("executor", call("modify_pending_order_address", order_id="#T0000001", address1="7 Lark Street",
                                 address2="Apt 9", city=None, state=None, country=None, zip=None))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, "Please ship #T0000001 to my home address instead", turn_key="a:1",
                         conversation_id="a")
    assert asked.outcome == "pending_confirmation", asked.reply
    assert "7 Lark Street" in asked.reply and "Unit 2" in asked.reply and "Apt 9" not in asked.reply
    assert order(engine, "#T0000001")["address"]["address1"] == "1 Test Way"  # nothing written before the yes


def test_a_payment_method_the_customer_did_not_name_is_asked_for(shop):  # noqa: F811
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", call("modify_pending_order_payment", order_id="#T0000002",
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, "I'd like to pay order #T0000002 another way", turn_key="m:1", conversation_id="m")
    assert asked.outcome == "refused_missing_args" and "which payment method" in asked.reply
    assert asked.trace["steps"][-2]["unnamed"] == [{"operation": "modify_pending_order_payment",
                                                    "args": ["payment_method_id"]}]
    # Named by its kind, its brand or its last digits, it is used.
    for said in ("pay it with my credit card", "use the visa please", "the one ending 1111"):
        assert unnamed(PAY, {"payment_method_id": "credit_card_mia"}, [MIA_METHODS], [said]) == [], said
    assert unnamed(PAY, {"payment_method_id": "credit_card_mia"}, [MIA_METHODS], ["use my gift card"]) == [
        "payment_method_id"]
    # "Payment" names no method, though an order's payment history says it beside one (the customer wanted PayPal,
    # and their "PayPal account for any additional payment" kept the card the model chose, train task 52).
    paid = {"payments": [{"type": "payment", "amount": 25.0, "method": "credit_card_mia"}]}
    paypal = {"payment_methods": [{"id": "paypal_mia", "source": "paypal"}]}
    said = ["My PayPal account for any additional payment."]
    assert unnamed(PAY, {"payment_method_id": "credit_card_mia"}, [MIA_METHODS, paypal, paid], said) == [
        "payment_method_id"]
    assert unnamed(PAY, {"payment_method_id": "paypal_mia"}, [MIA_METHODS, paypal, paid], said) == []


@pytest.mark.parametrize("proposed", ["exchange_delivered_order_items", "modify_pending_order_items"])
def test_items_exchanged_for_themselves_are_their_return(shop, proposed):  # noqa: F811
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    # The same look-up again: the next step may only act (no product was read, so new item ids are free text).
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    # The pending order's item change, for this delivered order, is its exchange first, and so its return.
    llm.enqueue("executor", call(proposed, order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=["k-glass-1l"], payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, "I want you to take back everything from #T0000003, refund to my gift card",
                         turn_key="x:1", conversation_id="x")
    assert asked.outcome == "pending_confirmation" and asked.operation == "return_delivered_order_items"
    assert asked.args == {"order_id": "#T0000003", "item_ids": ["k-glass-1l"], "payment_method_id": "gift_card_mia"}
    assert order(engine, "#T0000003")["status"] == "delivered"  # nothing written before the yes
    # Lines exchanged for other items stay an exchange.
    assert not for_themselves(OPERATIONS["exchange_delivered_order_items"],
                              {"item_ids": ["k-glass-1l"], "new_item_ids": ["k-red-1l"]})


def test_items_exchanged_for_themselves_stay_a_swap_where_a_swap_and_no_return_is_asked(shop):  # noqa: F811
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=["k-glass-1l"], payment_method_id="gift_card_mia"))
    to_system(llm, fresh=False)  # the redo, refused in its turn: nothing said of what the kettle becomes
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=["k-red-1l"], payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, "I want to change the kettle, paying with my gift card", turn_key="y:1", conversation_id="y")
    proposed = next(s for s in res.trace["steps"] if s.get("operation") == "exchange_delivered_order_items")
    assert "switched" not in proposed and proposed["outcome"] != "ok"  # no return nobody asked for: refused, redone
    assert res.operation == "exchange_delivered_order_items" and not res.committed  # the redo: still a swap
    assert order(engine, "#T0000003")["status"] == "delivered"


def test_the_grammar_offers_only_the_payment_method_the_customer_named():
    sources = [MIA_METHODS, {"payment_methods": [{"id": "paypal_mia", "source": "paypal"}]}]
    options = arg_options([PAY], sources)
    methods = {arg: values for _, arg, values, _ in named_options([PAY], options, sources, ["my PayPal, please"])}
    assert methods["payment_method_id"] == ("paypal_mia",)
    unnamed_yet = {arg: values for _, arg, values, _ in named_options([PAY], options, sources, ["pay another way"])}
    assert set(unnamed_yet["payment_method_id"]) == {"gift_card_mia", "credit_card_mia", "paypal_mia"}
    for said, offered in [("My gift card please; if that's not possible, my credit card", ("gift_card_mia",)),
                          ("Gift card or credit card, whichever", ("gift_card_mia", "credit_card_mia")),
                          ("If that isn't possible, the credit card", ("credit_card_mia",))]:  # none before it
        named = {arg: values for _, arg, values, _ in named_options([PAY], options, sources, [said])}
        assert named["payment_method_id"] == offered, said


def test_a_value_the_customer_replaced_after_its_refusal_is_not_offered_again():
    sources = [MIA_METHODS, {"payment_methods": [{"id": "paypal_mia", "source": "paypal"}]}]
    options = arg_options([PAY], sources)
    # The request the answer completes still names the card the refusal was for; the answer names PayPal.
    said = ["Pay my order with my credit card instead. Alright, PayPal then.", "Alright, PayPal then."]
    before = {arg: values for _, arg, values, _ in named_options([PAY], options, sources, said)}
    assert before["payment_method_id"] == ("credit_card_mia",)  # named first: the grammar left the model no choice
    replaced = {"payment_method_id": "credit_card_mia"}
    now = {arg: values for _, arg, values, _ in named_options([PAY], options, sources, said, replaced)}
    assert now["payment_method_id"] == ("paypal_mia",)
    gift = said[0].replace("PayPal", "my gift card")
    now = {arg: values for _, arg, values, _ in named_options([PAY], options, sources, [gift], replaced)}
    assert now["payment_method_id"] == ("gift_card_mia",)
    # The answer names the refused value itself: the customer insists on it, and it is offered.
    assert still_replaced([PAY], replaced, sources, "Alright, PayPal then.") == replaced
    assert still_replaced([PAY], replaced, sources, "I said pay it with my credit card") == {}
    # Nothing else to offer: the value stays (the platform refuses it again, in words).
    alone = ((PAY.name, "payment_method_id", ("credit_card_mia",), ()),)
    assert named_options([PAY], alone, sources, said, replaced) == alone


SWAP = OPERATIONS["exchange_delivered_order_items"]
PAID_BY_CARD = {"order_id": "#W2", "status": "delivered", "items": [],
                "payments": [{"type": "payment", "amount": 25.0, "method": "credit_card_mia"},
                             {"type": "payment", "amount": 3.0, "method": "gift_card_mia"}]}


@pytest.mark.parametrize("said, card, gift", [
    (["exchange the lamp for the blue one"], ["payment_method_id"], ["payment_method_id"]),  # asked, not guessed
    (["exchange the lamp", "The original payment method."], [], ["payment_method_id"]),  # the order's first payment
    (["exchange the lamp, on the card I paid with"], [], ["payment_method_id"]),
    (["exchange the lamp", "My gift card, please"], ["payment_method_id"], []),
])
def test_a_swaps_difference_is_paid_by_the_method_named_or_the_orders_own(said, card, gift):
    swap = {"order_id": "#W2", "item_ids": ["a"], "new_item_ids": ["b"]}
    sources = [MIA_METHODS, PAID_BY_CARD]
    assert unnamed(SWAP, {**swap, "payment_method_id": "credit_card_mia"}, sources, said) == card
    assert unnamed(SWAP, {**swap, "payment_method_id": "gift_card_mia"}, sources, said) == gift


def test_a_customer_with_one_payment_method_is_not_asked_which_pays_the_difference():
    one = {"payment_methods": [{"id": "credit_card_mia", "source": "credit_card", "card": "visa ending 1111"}]}
    swap = {"order_id": "#W2", "item_ids": ["a"], "new_item_ids": ["b"], "payment_method_id": "credit_card_mia"}
    assert unnamed(SWAP, swap, [one, PAID_BY_CARD], ["exchange the lamp for the blue one"]) == []


def test_the_grammar_offers_the_orders_own_method_where_the_customer_says_original():
    sources = [MIA_METHODS, PAID_BY_CARD]
    options = arg_options([SWAP], sources)
    offered = {arg: values for _, arg, values, _ in named_options([SWAP], options, sources,
                                                                  ["exchange it", "the original payment method"])}
    assert offered["payment_method_id"] == ("credit_card_mia",)
    unsaid = {arg: values for _, arg, values, _ in named_options([SWAP], options, sources, ["exchange it"])}
    assert set(unsaid["payment_method_id"]) == {"gift_card_mia", "credit_card_mia"}


def test_a_cancel_reason_the_customer_did_not_give_is_asked_for(shop):  # noqa: F811
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, "Please cancel my order #T0000002", turn_key="r:1", conversation_id="r")
    assert asked.outcome == "refused_missing_args" and "reason" in asked.reply.lower(), asked.reply
    assert order(engine, "#T0000002")["status"] == "pending"
    # The answer keeps the request's route: no level-1 question (it took "I no longer need it" for a profile fact).
    answering(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="no longer needed"))
    llm.enqueue("verifier", verdict(9))
    history = [asked.to_record("Please cancel my order #T0000002")]
    done = agent.handle(MIA, "I found a better one in a local shop, so I no longer need it", history=history,
                        turn_key="r:2", conversation_id="r")
    assert done.outcome == "pending_confirmation" and done.args["reason"] == "no longer needed"
    assert [(s["role"], s["route"]) for s in done.trace["steps"] if s.get("answer")] == [("classifier", "system")]
    assert llm.pending() == {}
    cancel = OPERATIONS["cancel_pending_order"]
    for said, reason in (("I don't need it anymore", "no longer needed"), ("They're no longer needed", "no longer needed"),
                         ("I bought it by mistake", "ordered by mistake")):
        assert unnamed(cancel, {"order_id": "#T0000002", "reason": reason}, [], [said]) == [], said
    assert unnamed(cancel, {"order_id": "#T0000002", "reason": "ordered by mistake"}, [], ["I don't need it"]) == [
        "reason"]
    # In Chinese the words cannot tell: the model's reading stands (asked again, the customer could never answer it).
    assert unnamed(cancel, {"order_id": "#T0000002", "reason": "no longer needed"}, [], ["取消订单，不需要了"]) == []


def test_a_write_of_the_record_named_only_as_the_source_of_a_value_is_dropped():
    from chops.pipeline.context import Step
    from chops.pipeline.repairs import not_of_sources, of_the_other
    from chops.pipeline.walk import only_alike

    def ship(order_id):
        return Step(operation=SHIP.name, proposed_args={}, args={**HOME, "order_id": order_id}, writes=True)
    assert only_alike("#W1: address as #W3, and cancel #W2") == {"#W3"}
    assert only_alike("For order #W1, change the address to be the same as order #W3") == {"#W3"}
    assert only_alike("ship #W1 like the one on #W3, then cancel #W3") == set()  # #W3 is changed too
    assert only_alike("as soon as order #W1 ships, cancel #W2") == set()
    step: dict = {}
    text = "For order #W1, change the address to be the same as order #W3"
    kept = not_of_sources([ship("#W3"), ship("#W1")], text, step)
    assert [s.args["order_id"] for s in kept] == ["#W1"] and step["source_only"][0]["args"]["order_id"] == "#W3"
    assert [s.args["order_id"] for s in not_of_sources([ship("#W3")], text, {})] == ["#W3"]  # nothing else: kept
    # The source's change alone, as proposed: it is of the other order the request types.
    calls = [(SHIP.name, {**HOME, "order_id": "#W3"})]
    assert [a["order_id"] for _, a in of_the_other({SHIP.name: SHIP}, calls, text, step)] == ["#W1"]
    assert step["of_the_other"][0]["source"]["order_id"] == "#W3"
    for unclear in ("Change the address of #W1 or #W2 to be the same as order #W3", "Use the same address as #W3"):
        assert of_the_other({SHIP.name: SHIP}, calls, unclear, {}) == calls, unclear


def test_a_write_is_of_the_record_the_sentences_naming_its_kind_type(shop):  # noqa: F811
    from chops.pipeline.walk import near_word
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000001", reason="no longer needed"))
    llm.enqueue("verifier", verdict(9))
    text = "Why are #T0000001 and #T0000002 pending? If #T0000002 isn't shipped yet, cancel it, I no longer need it"
    asked = agent.handle(MIA, text, turn_key="n:1", conversation_id="n")
    assert asked.outcome == "pending_confirmation" and asked.args["order_id"] == "#T0000002", asked.reply
    assert order(engine, "#T0000001")["status"] == order(engine, "#T0000002")["status"] == "pending"
    assert near_word("Ship #W1000001 to 12 Elm St. Cancel W1000002.", "cancel", "#W1000001") == "#W1000002"
    for said in ("Cancel #W1000001 and #W1000002.", "Cancel #W1000001. Also cancel #W1000002, please.",
                 "For #W1000001, change the address. Cancel it too.", "Cancel #W1000002 now."):
        assert near_word(said, "cancel", "#W1000002") is None, said  # both, none, or the one proposed
    assert near_word("Cancel #W1000002 now.", "cancel", "#W3000003") is None  # an id the customer did not type
