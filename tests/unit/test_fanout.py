"""The same change for every record a request covers (``chops.pipeline.fanout``), on the made-up shop: Mia has three
pending orders (#T0000001 a steel kettle and two red scarves, #T0000002 a chair, #T0000006 a red kettle)."""

from __future__ import annotations

import pytest

from apis.retail.registry import OPERATIONS
from chops.pipeline.fanout import by_state, elsewhere, quantified
from chops.pipeline.walk import typed_ids
from tests.unit.pipeline_support import call, to_system, verdict
from tests.unit.retail_support import MIA, order
from tests.unit.test_lookup_confirm import YES
from tests.unit.test_retail_agent import kettle_to_glass, shop  # noqa: F401  (fixture)


@pytest.mark.parametrize("text, names, expected", [
    ("Cancel all my pending orders, I don't need them", [], True),
    ("please cancel every order that hasn't shipped", [], True),
    ("change the address of each order I have open", [], True),
    ("Send both of my orders to my new flat", [], True),
    ("I want all my pending kettles in glass", ["Kettle"], True),
    ("请取消我所有的订单", [], True),
    ("Actually it's two kettles I want changed, both in glass", ["Kettle"], True),  # a count of what two hold
    ("I have two orders; cancel the one with the chair", [], True),  # quantified, then narrowed by what it names
    ("Return all the items from my last order", [], False),  # all the items, of one order
    ("That's all, cancel the order with the chair", [], False),
    ("All right, change the order's address", [], False),
    ("I want all my pending kettles in glass", [], False),  # no two orders hold a kettle: it names no records
])
def test_a_quantifier_quantifies_the_records_or_what_two_of_them_hold(text, names, expected):
    assert quantified(text, "order", names) is expected


def test_cancel_all_pending_orders_is_one_plan_of_a_cancel_each(shop):  # noqa: F811
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="no longer needed"))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, "Cancel all my pending orders please, I no longer need them", turn_key="f:1",
                         conversation_id="f")
    assert asked.outcome == "pending_confirmation" and not asked.committed
    assert [(s["operation"], s["args"]["order_id"]) for s in asked.steps] == [
        ("cancel_pending_order", "#T0000002"), ("cancel_pending_order", "#T0000001"),
        ("cancel_pending_order", "#T0000006")]  # the model's, then the others pending, in the profile's order
    assert all(order(engine, o)["status"] == "pending" for o in ("#T0000001", "#T0000002", "#T0000006"))
    llm.enqueue("classifier", YES)
    done = agent.handle(MIA, "yes", turn_key="f:2", conversation_id="f")
    assert done.committed
    assert all(order(engine, o)["status"] == "cancelled" for o in ("#T0000001", "#T0000002", "#T0000006"))
    assert order(engine, "#T0000007")["status"] == "pending (item modified)"  # not a state a cancel takes


def test_all_pending_orders_asked_the_reason_are_each_cancelled_once_it_is_given(shop):  # noqa: F811
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    text = "Cancel all my pending orders please"
    asked = agent.handle(MIA, text, turn_key="g:1", conversation_id="g")
    assert asked.outcome == "refused_missing_args" and "reason" in asked.reply  # the guess is not taken
    to_system(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="no longer needed"))
    llm.enqueue("verifier", verdict(9))
    given = agent.handle(MIA, "I don't need them anymore", history=[asked.to_record(text)], turn_key="g:2",
                         conversation_id="g")
    assert given.outcome == "pending_confirmation"
    assert [s["args"]["order_id"] for s in given.steps] == ["#T0000002", "#T0000001", "#T0000006"]


def test_a_swap_for_all_orders_holding_the_product_takes_each_orders_own_line(shop):  # noqa: F811
    agent, engine, llm = shop
    kettle_to_glass(llm, "#T0000001", "k-steel-1l", "credit_card_mia")
    asked = agent.handle(MIA, "Make both kettles I have on order the glass one, pay with my credit card",
                         turn_key="s:1", conversation_id="s")
    assert asked.outcome == "pending_confirmation"
    assert [(s["args"]["order_id"], s["args"]["item_ids"], s["args"]["new_item_ids"]) for s in asked.steps] == [
        ("#T0000001", ["k-steel-1l"], ["k-glass-1l"]), ("#T0000006", ["k-red-1l"], ["k-glass-1l"])]
    # The second order's line was not known: it was looked up (and the trace keeps it, as any look-up).
    looked = [x for s in asked.trace["steps"] for x in s.get("lookups") or []]
    assert ("get_order_details", {"order_id": "#T0000006"}) in [(x["operation"], x["args"]) for x in looked]
    assert [i["item_id"] for i in order(engine, "#T0000006")["items"]] == ["k-red-1l"]  # nothing before the yes


@pytest.mark.parametrize("text", [
    "Cancel the order with the chair, I no longer need it",  # no quantifier
    "Cancel all of order #T0000002, I no longer need it",  # the customer typed the order
])
def test_a_request_about_one_record_stays_one_write(shop, text):  # noqa: F811
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="no longer needed"))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, text, turn_key="o:1", conversation_id="o")
    assert [s["args"]["order_id"] for s in asked.steps] == ["#T0000002"]


def _delivered(order_id: str, *names: str, status: str = "delivered") -> dict:
    return {"order_id": order_id, "status": status, "names": list(names)}


RETURN = OPERATIONS["return_delivered_order_items"]
HELD = {"user_id": "mia", "orders": ["#T0000021", "#T0000022", "#T0000023", "#T0000024", "#T0000025"], "statuses": [
    _delivered("#T0000021", "Skillet", "Desk Lamp"), _delivered("#T0000022", "Kite"),
    _delivered("#T0000023", "Tent", "Yoga Mat"), _delivered("#T0000024", "Tent", status="pending"),
    _delivered("#T0000025", "Hammock", "Desk Lamp")]}


@pytest.mark.parametrize("text, expected", [
    # the kite and the tent each lie in one other delivered order (the pending one's tent is no return's)
    ("Please return the desk lamp, the kite and the tent, but keep the yoga mat", ["#T0000022", "#T0000023"]),
    ("I'd like to send back my skillet and desk lamp plus the hammock", ["#T0000025"]),
    ("Return the desk lamp; also cancel the tent", []),  # the tent's is another kind of change
    ("Return the desk lamp from #T0000021 and the kite", []),  # an id typed: the records are the customer's
    ("Return the desk lamp and the skillet", []),  # both in the write's own order
])
def test_products_named_that_one_other_record_holds_add_the_write_for_it(text, expected):
    args = {"order_id": "#T0000021", "item_ids": ["lamp-1"], "payment_method_id": "paypal_mia"}
    kinds = [o.kind for o in OPERATIONS.values() if o.writes and o.kind != RETURN.kind]
    typed = ["#T0000021"] if "#T0000021" in text else []
    assert elsewhere(RETURN, args, [HELD], text, typed, set(), kinds) == expected


def oak_road(llm) -> None:
    """Script the model proposing Mia's default address change to 12 Oak Road, and the verifier passing it."""
    to_system(llm)
    llm.enqueue("executor", call("modify_user_address", address1="12 Oak Road", address2="", city="Testville",
                                 state="ZZ", country="USA", zip="11111"))
    llm.enqueue("verifier", verdict(9))


def test_a_default_address_change_for_all_pending_orders_too_changes_each_orders_address(shop):  # noqa: F811
    agent, engine, llm = shop
    oak_road(llm)
    asked = agent.handle(MIA, "Please change my default address to 12 Oak Road, Testville, ZZ 11111, and the address "
                         "of all my pending orders as well", turn_key="s:1", conversation_id="s")
    assert asked.outcome == "pending_confirmation" and not asked.committed
    assert [(s["operation"], s["args"].get("order_id")) for s in asked.steps] == [
        ("modify_user_address", None), ("modify_pending_order_address", "#T0000001"),
        ("modify_pending_order_address", "#T0000002"), ("modify_pending_order_address", "#T0000006"),
        ("modify_pending_order_address", "#T0000007")]  # every order an address change takes, beyond the model's 3
    assert asked.steps[1]["args"]["address1"] == "12 Oak Road" and order(engine, "#T0000001")["address"][
        "address1"] == "1 Test Way"
    llm.enqueue("classifier", YES)
    assert agent.handle(MIA, "yes", turn_key="s:2", conversation_id="s").committed
    assert all(order(engine, o)["address"]["address1"] == "12 Oak Road"
               for o in ("#T0000001", "#T0000002", "#T0000006", "#T0000007"))
    assert order(engine, "#T0000003")["address"]["address1"] == "1 Test Way"  # delivered: not an address change's


def test_a_default_address_change_alone_stays_one_write(shop):  # noqa: F811
    agent, _, llm = shop
    oak_road(llm)
    asked = agent.handle(MIA, "Please change my default address to 12 Oak Road, Testville, ZZ 11111",
                         turn_key="t:1", conversation_id="t")
    assert [s["operation"] for s in asked.steps] == ["modify_user_address"]


def test_a_return_added_for_another_order_refunds_that_orders_own_payment_method(sqlite_url):
    from apis.retail import loader
    from tests.unit.retail_support import shop_document
    from tests.unit.test_retail_agent import shop_of

    document = shop_document()
    document["orders"]["#T0000004"]["status"] = "delivered"  # paid with PayPal; #T0000003 with the card
    agent, engine, llm = shop_of(sqlite_url, document)
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003",
                                 item_ids=["k-glass-1l", "s-silk-red"], payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Please return everything from both of my orders that were delivered", turn_key="r:1",
                          conversation_id="r")
    assert result.outcome == "pending_confirmation"
    assert [(s["args"]["order_id"], s["args"]["payment_method_id"]) for s in result.steps] == [
        ("#T0000003", "credit_card_mia"), ("#T0000004", "paypal_mia")]  # each order's own method, not the first's
    assert loader.export(engine) == before and llm.pending() == {}
    engine.dispose()


def test_a_write_another_records_added_write_takes_every_product_of_is_left_out(sqlite_url):
    from apis.retail import loader
    from tests.unit.retail_support import shop_document
    from tests.unit.test_retail_agent import shop_of

    document = shop_document()
    document["orders"]["#T0000004"]["status"] = "delivered"  # a scarf alone; #T0000003 holds a kettle and a scarf
    agent, engine, llm = shop_of(sqlite_url, document)
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000004"))
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000004", item_ids=["s-wool-blue"],
                                 payment_method_id="paypal_mia"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Return the scarf and the kettle I received, they came in one order", turn_key="r:1",
                          conversation_id="r")
    assert result.outcome == "pending_confirmation"
    # The order holding both was added for the kettle; the other order's scarf was asked for by nothing more.
    assert [(s["args"]["order_id"], sorted(s["args"]["item_ids"])) for s in result.steps] == [
        ("#T0000003", ["k-glass-1l", "s-silk-red"])]
    assert loader.export(engine) == before and llm.pending() == {}
    engine.dispose()


ADDRESS = OPERATIONS["modify_pending_order_address"]
OPEN = {"user_id": "mia", "orders": ["#T0000031", "#T0000032", "#T0000033"], "statuses": [
    _delivered("#T0000031", "Kite"), _delivered("#T0000032", "Tent", status="pending"),
    _delivered("#T0000033", "Hammock", status="cancelled")]}
TWO_OPEN = {**OPEN, "statuses": [*OPEN["statuses"], _delivered("#T0000034", "Lamp", status="pending (item modified)")]}


@pytest.mark.parametrize("held, text, expected", [
    (OPEN, "Please send my pending order there, and make it my default address as well.", ["#T0000032"]),
    (OPEN, "New default address please; ship my pending order to it too", ["#T0000032"]),
    (TWO_OPEN, "Send my pending orders there and update my default address", ["#T0000032", "#T0000034"]),
    (TWO_OPEN, "Send my pending order there too", []),  # two are pending: which one is the customer's to say
    (OPEN, "Change my default address; my pending order can stay where it is", []),
    (OPEN, "Change my default address. My pending order should go to the old one", []),  # no address change asked
    (OPEN, "Send my pending order #T0000032 there too", []),  # an id typed
])
def test_a_record_named_by_its_state_is_the_one_in_it(held, text, expected):
    assert by_state(ADDRESS, [held], text, typed_ids([text])) == expected
