"""Grounding at decode time (``chops.pipeline.choices``): once the profile or a look-up has listed ids, the
executor's plan grammar offers only those (and ids the customer typed) for the arguments that declare where
their values come from; the retail pack's id arguments do, CPHOS's none."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from apis.cphos.registry import OPERATIONS as CPHOS_OPERATIONS
from apis.retail.registry import OPERATIONS
from chops.pipeline.choices import arg_options
from chops.pipeline.walk import typed_ids
from chops.pipeline.states import counterpart, out_of_state
from chops.pipeline.each import EachOf
from chops.pipeline.walk import values_at
from chops.pipeline.schemas import plan_schema
from tests.unit.pipeline_support import call, prompt_text, to_system, verdict
from tests.unit.retail_support import LEO, MIA
from tests.unit.test_retail_agent import shop  # noqa: F401  (fixture)

ORDER = {"order_id": "#W1000001", "status": "delivered",
         "items": [{"item_id": "111", "product_id": "p1", "name": "Lamp"},
                   {"item_id": "222", "product_id": "p2", "name": "Mug"}],
         "payments": [{"type": "payment", "amount": 9.5, "method": "gift_card_1"}],
         "exchange": {"items": ["999"], "new_items": ["998"]}}
PRODUCT = {"product_id": "p1", "name": "Lamp", "variants": {"333": "red; $10.00; available",
                                                           "444": "blue; $11.00; available"}}
PROFILE = {"user_id": "u1", "orders": ["#W1000001", "#W1000002"],
           "payment_methods": [{"id": "gift_card_1", "source": "gift_card"}, {"id": "paypal_2", "source": "paypal"}]}


def test_a_path_finds_values_keys_and_listed_fields_at_any_depth():
    assert values_at(ORDER, "items.item_id") == ["111", "222"]  # not the exchange's bare lists
    assert values_at(PRODUCT, "variants") == ["333", "444"]  # a mapping keyed by item id
    assert values_at(PROFILE, "payment_methods.id") == ["gift_card_1", "paypal_2"]
    assert values_at(PROFILE, "orders") == ["#W1000001", "#W1000002"]
    assert set(values_at(ORDER, "product_id")) == {"p1", "p2"}
    assert values_at(PRODUCT, "nothing") == [] and values_at(PRODUCT, "variants.red") == []


def test_ids_the_customer_typed_are_the_tokens_with_a_digit():
    texts = ["Cancel #W1000009 please, and W1000008.", "my card is gift_card_77; I am 4 feet tall",
             "订单 #W1000007 不要了"]
    assert typed_ids(texts) == ["#W1000009", "W1000008", "gift_card_77", "#W1000007"]  # "4": too short to be an id


def options_of(ops, sources, typed=()):
    return {(op, arg): values for op, arg, values, _ in arg_options(ops, sources, typed)}


def test_each_id_argument_is_offered_what_its_keys_hold_plus_typed_ids():
    ops = (OPERATIONS["exchange_delivered_order_items"], OPERATIONS["get_product_details"])
    offered = options_of(ops, [PROFILE, ORDER, PRODUCT], ["#W1000009"])
    exchange = "exchange_delivered_order_items"
    assert offered[(exchange, "order_id")] == ("#W1000001", "#W1000002", "#W1000009")
    assert offered[(exchange, "item_ids")] == ("111", "222", "#W1000009")
    assert offered[(exchange, "new_item_ids")] == ("333", "444", "#W1000009")
    assert offered[(exchange, "payment_method_id")] == ("gift_card_1", "paypal_2", "#W1000009")
    assert set(offered[("get_product_details", "product_id")]) == {"p1", "p2", "#W1000009"}
    # A bare number is offered only where the ids are numbers of its length ("1000 more pieces", train task 98).
    numbers = options_of(ops, [PROFILE, ORDER, PRODUCT], ["1000", "555"])
    assert numbers[(exchange, "new_item_ids")] == ("333", "444", "555")
    assert numbers[(exchange, "order_id")] == ("#W1000001", "#W1000002")
    # Nothing looked up yet for an argument: it stays free text (typed ids alone do not close it).
    assert (exchange, "new_item_ids") not in options_of(ops, [PROFILE, ORDER], ["#W1000009"])
    # CPHOS declares none: its grammar is exactly as before.
    assert arg_options(tuple(CPHOS_OPERATIONS.values()), [PROFILE, ORDER]) == ()


STATUSES = {"statuses": [{"order_id": "#W1000001", "status": "delivered"},
                         {"order_id": "#W1000002", "status": "pending"}]}


def test_an_item_change_of_a_delivered_order_is_its_exchange_and_the_other_way_round():
    sources = [{**PROFILE, **STATUSES}]
    swap = {"order_id": "#W1000001", "item_ids": ["111"], "new_item_ids": ["333"], "payment_method_id": "gift_card_1"}
    assert counterpart(OPERATIONS["modify_pending_order_items"], swap, sources) == "exchange_delivered_order_items"
    pending = {**swap, "order_id": "#W1000002"}
    assert counterpart(OPERATIONS["exchange_delivered_order_items"], pending, sources) == "modify_pending_order_items"
    # The state the operation takes, an order of no known state, or no counterpart: the operation itself.
    assert counterpart(OPERATIONS["modify_pending_order_items"], pending, sources) is None
    assert counterpart(OPERATIONS["modify_pending_order_items"], {**swap, "order_id": "#W1000009"}, sources) is None
    cancel = {"order_id": "#W1000001", "reason": "no longer needed"}
    assert counterpart(OPERATIONS["cancel_pending_order"], cancel, sources) is None
    # The order as looked up this turn counts over the profile's overview.
    assert counterpart(OPERATIONS["modify_pending_order_items"], pending,
                       [*sources, {"order_id": "#W1000002", "status": "delivered"}]) == "exchange_delivered_order_items"


def test_a_write_of_a_record_in_a_state_it_does_not_take_is_refused_before_the_platform_is_asked():
    sources = [{**PROFILE, **STATUSES}]
    cancel = OPERATIONS["cancel_pending_order"]
    refused = out_of_state(cancel, {"order_id": "#W1000001", "reason": None}, sources)
    assert refused.outcome == "refused_precondition"
    assert refused.message == "#W1000001 is delivered; this can only be done while it is pending"
    assert out_of_state(cancel, {"order_id": "#W1000002", "reason": None}, sources) is None  # pending
    assert out_of_state(cancel, {"order_id": "#W1000009", "reason": None}, sources) is None  # state not known
    modified = [{**PROFILE, "statuses": [{"order_id": "#W1000003", "status": "pending (item modified)"}]}]
    refused = out_of_state(cancel, {"order_id": "#W1000003", "reason": None}, modified)
    assert refused.message == ("#W1000003 is pending (item modified); this can only be done while it is pending, "
                               "not pending (item modified)")
    swap = {"order_id": "#W1000002", "item_ids": ["111"], "new_item_ids": ["333"], "payment_method_id": "gift_card_1"}
    assert out_of_state(OPERATIONS["modify_pending_order_items"], swap, sources) is None


def test_a_write_of_a_record_in_the_state_the_request_names_is_offered_only_such_records():
    statuses = [{"order_id": "#W1000001", "status": "cancelled"}, {"order_id": "#W1000002", "status": "pending"},
                {"order_id": "#W1000003", "status": "pending (item modified)"}]
    sources = [{**PROFILE, "orders": ["#W1000001", "#W1000002", "#W1000003"], "statuses": statuses}]
    address = (OPERATIONS["modify_pending_order_address"],)

    def offered(message: str) -> tuple[str, ...]:
        return next(v for op, arg, v, _ in arg_options(address, sources, (), message) if arg == "order_id")
    assert offered("and send my pending order there too") == ("#W1000002", "#W1000003")
    assert offered("and send my order there too") == ("#W1000001", "#W1000002", "#W1000003")  # no state named
    assert offered("send my delivered order there") == ("#W1000001", "#W1000002", "#W1000003")  # a state it takes not
    # A state named, none of the customer's in it: every record stays (the platform says why not)
    only_cancelled = [{**PROFILE, "orders": ["#W1000001"], "statuses": statuses[:1]}]
    assert next(v for _, arg, v, _ in arg_options(address, only_cancelled, (), "my pending order")
                if arg == "order_id") == ("#W1000001",)


def test_a_delivered_orders_cancel_is_redone_as_its_return_only_where_the_request_names_one():
    sources, cancel = [{**PROFILE, **STATUSES}], OPERATIONS["cancel_pending_order"]
    args, writes = {"order_id": "#W1000001", "reason": None}, list(OPERATIONS.values())
    for asked in ["Cancel or return the order with the lamp", "Cancel the lamp that arrived yesterday, it came broken",
                  "Please cancel the mug I received"]:
        assert out_of_state(cancel, args, sources, writes, asked).data == {"instead": "return_delivered_order_items"}
    # "camera" is not "came", "receiver" is a thing, not "received": a cancel asked is refused with its reason
    for asked in ["Cancel my order with the tea kettle and the security camera", "Cancel the order with the receiver"]:
        refused = out_of_state(cancel, args, sources, writes, asked)
        assert refused.outcome == "refused_precondition" and refused.data is None, asked
    # The customer's own words a request was split from may say it: the split dropped "I received" (train task 103).
    # A kind named only there does not count: that clause may ask for another write of its own.
    asked = "Cancel the mug and the bowl from the same order."
    assert out_of_state(cancel, args, sources, writes, asked, "cancel the mug and the bowl I received,").data == {
        "instead": "return_delivered_order_items"}
    assert out_of_state(cancel, args, sources, writes, asked, "cancel the mug and return the bowl").data is None
    # A state said of a record names it, and asks for no write of that kind: "my cancelled order" is no cancel.
    ret, pending = OPERATIONS["return_delivered_order_items"], {"order_id": "#W1000002", "item_ids": ["111"],
                                                               "payment_method_id": "gift_card_1"}
    cancelled = [{**PROFILE, "statuses": [*STATUSES["statuses"], {"order_id": "#W1000003", "status": "cancelled"}]}]
    assert out_of_state(ret, pending, cancelled, writes, "the tracking number of my cancelled order?").data is None
    assert out_of_state(ret, pending, cancelled, writes, "no, have it cancelled").data == {
        "instead": "cancel_pending_order"}
    assert out_of_state(cancel, args, sources, writes, "cancel the delivered lamp").data == {
        "instead": "return_delivered_order_items"}  # "delivered" still says it is one the customer has


def script_kettle_swap(llm, operation: str, item_ids: list[str]) -> None:
    """The executor reads #T0000003 and the kettle's product, then proposes ``operation`` of ``item_ids`` for the
    enamel kettle; the verifier passes it."""
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("get_product_details", product_id="p-kettle"))
    llm.enqueue("executor", call(operation, order_id="#T0000003", item_ids=item_ids, new_item_ids=["k-red-1l"],
                                 payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))


def test_the_executors_item_change_of_a_delivered_order_runs_as_its_exchange(shop):  # noqa: F811
    agent, _, llm = shop
    script_kettle_swap(llm, "modify_pending_order_items", ["k-glass-1l"])
    result = agent.handle(MIA, "Please swap the glass kettle from #T0000003 for the enamel one, gift card for the "
                          "difference", turn_key="x:1", conversation_id="x")
    assert result.outcome == "pending_confirmation" and result.operation == "exchange_delivered_order_items"
    step = next(s for s in result.trace["steps"] if s.get("switched"))
    assert step["switched"] == [{"from": "modify_pending_order_items", "to": "exchange_delivered_order_items"}]
    assert "Kettle (material: glass -> enamel, $45.50 -> $38.99)" in prompt_text(llm, "verifier")  # the dry run of the exchange
    # The customer is asked about the change in words, not only in ids.
    assert "Kettle (material: glass -> enamel, $45.50 -> $38.99)" in result.reply and "Shall I go ahead?" in result.reply


def test_the_order_to_read_is_the_one_holding_what_the_message_mentions():
    read = (OPERATIONS["get_order_details"],)
    profile = {**PROFILE, "statuses": [{"order_id": "#W1000001", "status": "delivered", "names": ["Desk Lamp", "Mug"]},
                                       {"order_id": "#W1000002", "status": "pending", "names": ["T-Shirt", "Pet Bed"]}]}
    for message, expected in [("exchange the desk lamp I got", ("#W1000001",)),
                              ("the LAMPS were too bright", ("#W1000001",)),
                              ("my tshirt is too small", ("#W1000002",)),
                              ("the lamp and the t-shirt", ("#W1000001", "#W1000002")),
                              # nothing mentioned, or only words under 4 letters: every order, as before
                              ("where is my order?", ("#W1000001", "#W1000002")),
                              ("set the bed for my pet aside", ("#W1000001", "#W1000002")),
                              ("set the pet bed aside", ("#W1000002",))]:  # a name of short words, whole
        assert options_of_read(read, profile, message) == expected, message
    # An id the customer typed stays offered (the customer said which order).
    assert arg_options(read, [profile], ["#W1000002"], "the lamp in #W1000002")[0][2] == (
        "#W1000001", "#W1000002")


def test_the_order_to_read_is_the_one_holding_a_product_named_by_its_first_word():
    """"Exchange my espresso for …" reads the order holding the Espresso Machine: offered every order, the 1.5B read
    the one the message's first request was about (train task 107)."""
    read = (OPERATIONS["get_order_details"],)
    profile = {**PROFILE, "statuses": [
        {"order_id": "#W1000001", "status": "delivered", "names": ["Hiking Boots"]},
        {"order_id": "#W1000002", "status": "delivered", "names": ["Espresso Machine", "Garden Chair"]}]}
    for message, expected in [("I also want to exchange my espresso for a fancier one", ("#W1000002",)),
                              ("the espresso I received is broken", ("#W1000002",)),
                              ("the garden hose I bought", ("#W1000001", "#W1000002"))]:  # no product of theirs
        assert options_of_read(read, profile, message) == expected, message


def test_the_order_to_read_holds_as_many_lines_of_a_name_as_the_message_counts():
    read = (OPERATIONS["get_order_details"],)
    profile = {**PROFILE, "statuses": [
        {"order_id": "#W1000001", "status": "delivered", "names": ["T-Shirt", "Grill"]},
        {"order_id": "#W1000002", "status": "delivered", "names": ["T-Shirt", "Vase", "T-Shirt"]},
        {"order_id": "#W1000003", "status": "pending", "names": ["Vase", "Vase", "Desk Lamp"]}]}
    for message, expected in [("which two t-shirts did I order, and what are they made of?", ("#W1000002",)),
                              ("return both t-shirts", ("#W1000002",)),
                              ("what colour are the 2 vases I bought?", ("#W1000003",)),
                              ("the three vases I ordered", ("#W1000002", "#W1000003")),  # none holds three
                              ("two days ago I got a t-shirt", ("#W1000001", "#W1000002")),  # no count of t-shirts
                              ("return the t-shirt", ("#W1000001", "#W1000002"))]:
        assert options_of_read(read, profile, message) == expected, message


def options_of_read(read, profile, message):
    return arg_options(read, [profile], (), message)[0][2]


def test_the_order_to_read_is_one_a_return_or_cancel_asked_for_takes_where_one_holds_it():
    offered = (OPERATIONS["get_order_details"], OPERATIONS["return_delivered_order_items"],
               OPERATIONS["cancel_pending_order"], OPERATIONS["exchange_delivered_order_items"])
    profile = {**PROFILE, "orders": ["#W1000001", "#W1000002", "#W1000003"], "statuses": [
        {"order_id": "#W1000001", "status": "pending", "names": ["Smart Watch", "Mug"]},
        {"order_id": "#W1000002", "status": "delivered", "names": ["Smart Watch", "Kettle"]},
        {"order_id": "#W1000003", "status": "cancelled", "names": ["Kettle"]}]}
    for message, expected in [("return the watch I received", ("#W1000002",)),
                              ("cancel the watch I ordered", ("#W1000001",)),
                              ("cancel the kettle", ("#W1000002", "#W1000003")),  # none pending holds it: as before
                              ("exchange the watch for a black one", ("#W1000001", "#W1000002")),  # a swap's kind
                              ("where is my watch?", ("#W1000001", "#W1000002")),
                              ("return or cancel my watch", ("#W1000001", "#W1000002")),
                              # A state said names the records in it, "cancelled" no cancel asked for (train task 104).
                              ("what's the tracking number of my cancelled order?", ("#W1000003",)),
                              ("is my pending order shipped yet?", ("#W1000001",)),
                              ("has my watch been delivered?", ("#W1000001", "#W1000002")),  # a question of its state
                              ("cancel the kettle of my delivered order", ("#W1000002",)),
                              # A thing said to be held is in the state the write asked so takes (train task 29).
                              ("exchange the watch I got for the kind in my pending order", ("#W1000002",)),
                              ("swap the watch that I have received, not the one in my pending order",
                               ("#W1000002",)),
                              ("I received the wrong mug; is my pending order shipped yet?", ("#W1000001",))]:
        assert arg_options(offered, [profile], (), message)[0][2] == expected, message


def test_the_plan_schema_takes_only_offered_ids():
    ops = (OPERATIONS["return_delivered_order_items"],)
    schema = plan_schema(ops, True, arg_options(ops, [PROFILE, ORDER]))
    good = {"calls": [{"operation": "return_delivered_order_items",
                       "args": {"order_id": "#W1000001", "item_ids": ["222"], "payment_method_id": "gift_card_1"}}]}
    assert schema.model_validate(good).calls[0].args.item_ids == ["222"]
    for arg, invented in (("item_ids", ["223"]), ("order_id", "#W1000003"), ("payment_method_id", "credit_card_1")):
        bad = {"calls": [{**good["calls"][0], "args": {**good["calls"][0]["args"], arg: invented}}]}
        with pytest.raises(ValidationError):
            schema.model_validate(bad)
    assert "enum" in str(schema.model_json_schema())  # the grammar the engine compiles holds the list
    offered = len(dict(((op, arg), v) for op, arg, v, _ in arg_options(ops, [PROFILE, ORDER]))[
        ("return_delivered_order_items", "item_ids")])
    looped = {"calls": [{**good["calls"][0], "args": {**good["calls"][0]["args"], "item_ids": ["222"] * (offered + 1)}}]}
    with pytest.raises(ValidationError):  # a list of them is no longer than what is offered: no endless repeat
        schema.model_validate(looped)
    # null stays possible: a value the customer has not given is still said to be missing.
    schema.model_validate({"calls": [{**good["calls"][0], "args": {**good["calls"][0]["args"], "item_ids": None}}]})


def test_after_the_order_look_up_the_next_step_may_only_copy_its_item_ids(shop):  # noqa: F811
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "I'd like to return the glass kettle from #T0000003 to my gift card",
                          turn_key="r:1", conversation_id="r")
    assert result.outcome == "pending_confirmation"
    first, second = (schema for role, _, schema in llm.calls if role == "executor")
    item_ids = second.model_json_schema()["$defs"]["return_delivered_order_itemsArgs"]["properties"]["item_ids"]
    assert "k-glass-1l" in str(item_ids) and "c-black" not in str(item_ids)
    assert "s-silk-red" not in str(item_ids)  # the message names the kettle: the scarf's line is not offered
    # Before the look-up only the profile was read: order ids are offered (the customer's, and the typed one), and
    # not the return, whose item ids no look-up has listed yet (they would be the model's own); the cancel is.
    first_defs = first.model_json_schema()["$defs"]
    assert "return_delivered_order_itemsArgs" not in first_defs and "cancel_pending_orderArgs" in first_defs
    order_ids = first_defs["get_order_detailsArgs"]["properties"]["order_id"]
    assert "#T0000008" not in str(order_ids) and "#T0000003" in str(order_ids)


def test_with_id_choices_off_every_id_stays_free_text(sqlite_url):
    from chops.llm import ScriptedLLM
    from chops.pending import PendingChanges
    from chops.pipeline import Agent
    from chops.settings import get_settings
    from tests.unit.pipeline_support import FakeIndex
    from tests.unit.retail_support import load_shop
    from tests.unit.test_lookup_confirm import Approvals

    engine, api = load_shop(sqlite_url)
    llm = ScriptedLLM()
    agent = Agent(api, llm, get_settings(id_choices=False), FakeIndex(), approvals=Approvals(),
                  pending=PendingChanges(engine, ttl_s=600))
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It was delivered."}]})
    llm.enqueue("verifier", verdict(9))
    agent.handle(MIA, "Where is #T0000003?", turn_key="r:1", conversation_id="r")
    schemas = [schema for role, _, schema in llm.calls if role == "executor"]
    assert len(schemas) == 2 and all("enum" not in str(s.model_json_schema()["$defs"]["get_order_detailsArgs"])
                                     for s in schemas)
    engine.dispose()


def test_an_id_an_earlier_turn_looked_up_is_offered_and_grounded_later(shop):  # noqa: F811
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly",
                                        "answer": "It holds a glass kettle and a silk scarf."}]})
    llm.enqueue("verifier", verdict(9))
    first = agent.handle(MIA, "What is in #T0000003?", turn_key="r:1", conversation_id="r")
    assert first.trace["steps"] and first.outcome != "pending_confirmation"
    history = [first.to_record("What is in #T0000003?")]
    # The next turn proposes the return straight away: the kettle's item id was never typed, but the
    # conversation's look-up returned it.
    to_system(llm)
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))
    second = agent.handle(MIA, "Return the kettle to my gift card please", history=history, turn_key="r:2",
                          conversation_id="r")
    assert second.outcome == "pending_confirmation" and second.args["item_ids"] == ["k-glass-1l"]
    schema = [s for role, _, s in llm.calls if role == "executor"][-1]
    offered = str(schema.model_json_schema()["$defs"]["return_delivered_order_itemsArgs"]["properties"]["item_ids"])
    assert "k-glass-1l" in offered and "c-black" not in offered
    # The earlier turn's look-up is shown to this turn's executor and to the verifier, not only its ids.
    assert "[1] get_order_details(order_id='#T0000003')" in prompt_text(llm, "executor", -1)
    assert "k-glass-1l" in prompt_text(llm, "verifier", -1)
    # Without that history the return is not offered before the order is looked up (its item ids would be the
    # model's own); after the look-up they are copied from it.
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))
    fresh = agent.handle(MIA, "Return the kettle to my gift card please", turn_key="r2:1", conversation_id="r2")
    before, after = [s.model_json_schema()["$defs"] for role, _, s in llm.calls if role == "executor"][-2:]
    assert "return_delivered_order_itemsArgs" not in before and "return_delivered_order_itemsArgs" in after
    assert fresh.outcome == "pending_confirmation" and fresh.args["item_ids"] == ["k-glass-1l"]
    assert llm.pending() == {}, llm.pending()


def test_earlier_look_ups_are_each_call_once_and_none_from_before_a_committed_write():
    from chops.pipeline.context import TurnContext
    from chops.pipeline.lookups import earlier_lookups
    from chops.pipeline.trace import Trace
    from chops.records import TurnRecord

    def turn(*lookups, committed=False):
        steps = [{"role": "executor", "lookups": [{"operation": op, "args": args, "outcome": "ok", "data": data}
                                                  for op, args, data in lookups]}]
        return TurnRecord(user_text="…", committed=committed, trace={"steps": steps})

    old, new = {"status": "pending"}, {"status": "delivered"}
    history = [turn(("get_order_details", {"order_id": "#W1"}, old)),
               turn(("get_product_details", {"product_id": "p1"}, PRODUCT), ("get_order_details", {"order_id": "#W1"},
                                                                              new)),
               turn(("get_order_details", {"order_id": "#W2"}, None))]  # a failed look-up has no data
    ctx = TurnContext(nickname="u1", text="and the red one", profile=None, history=history, trace=Trace())
    shown = [(s.operation, s.args, s.result.data) for s in earlier_lookups(ctx)]
    assert shown == [("get_product_details", {"product_id": "p1"}, PRODUCT),
                     ("get_order_details", {"order_id": "#W1"}, new)]  # the newest result, where it was read
    ctx.history = [*history, turn(committed=True), turn(("get_order_details", {"order_id": "#W3"}, old))]
    assert [s.args for s in earlier_lookups(ctx)] == [{"order_id": "#W3"}]  # what came before the write is stale


def test_the_conversation_service_hands_the_agent_the_earlier_look_ups_from_the_store(shop):  # noqa: F811
    from chops.conversation import ConversationService
    from chops.store import ConversationStore

    agent, engine, llm = shop
    svc = ConversationService(ConversationStore(engine, api=agent.api), agent)
    cid = svc.start(MIA, "cli")
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "A glass kettle and a silk scarf."}]})
    llm.enqueue("verifier", verdict(9))
    svc.run_turn(cid, MIA, "What is in #T0000003?")
    to_system(llm)
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["s-silk-red"],
                                 payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))
    turn = svc.run_turn(cid, MIA, "I'll send the scarf back, refund to my gift card")
    assert turn.result.outcome == "pending_confirmation" and turn.result.args["item_ids"] == ["s-silk-red"]


def test_the_look_ups_shown_stay_inside_the_engine_context():
    from chops.domain.outcomes import OperationResult, Outcome
    from chops.pipeline.context import Step
    from chops.pipeline.lookups import OBSERVATIONS_CLIP, observations_section

    def looked(n: int) -> Step:
        data = {"order_id": f"#W{n:07d}", "items": [{"item_id": f"{n}{i:09d}", "name": "x" * 40} for i in range(12)]}
        return Step(operation="get_order_details", proposed_args={}, args={"order_id": f"#W{n:07d}"},
                    result=OperationResult(operation="get_order_details", outcome=Outcome.OK, message="ok",
                                           data=data))

    shown = observations_section([looked(n) for n in range(1, 9)])
    assert len(shown) < OBSERVATIONS_CLIP + 400  # the section's own words on top of the results
    assert "[1] get_order_details" in shown and "[8] get_order_details" in shown  # the first and the newest
    assert "[4] get_order_details" not in shown
    few = observations_section([looked(1), looked(2)])
    assert "[1] get_order_details" in few and "[2] get_order_details" in few


def test_the_shops_whole_product_list_is_shown_unclipped(retail_dir):
    import json

    from chops.domain.outcomes import OperationResult, Outcome
    from chops.pipeline.context import Step
    from chops.pipeline.lookups import observation

    products = json.loads((retail_dir / "database" / "db.json").read_text())["products"].values()
    # list_all_product_types' shape: product id -> name, by name.
    data = {"products": {p["product_id"]: p["name"] for p in sorted(products, key=lambda p: p["name"])}}
    step = Step(operation="list_all_product_types", proposed_args={}, args={},
                result=OperationResult(operation="list_all_product_types", outcome=Outcome.OK, message="", data=data))
    shown = observation(1, step)
    assert "…" not in shown and all(name in shown for name in data["products"].values())


def test_the_first_look_up_is_offered_the_order_holding_what_the_customer_describes(shop):  # noqa: F811
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Your chair is pending."}]})
    llm.enqueue("verifier", verdict(9))
    agent.handle(MIA, "Has the chair I bought shipped yet?", turn_key="c:1", conversation_id="c")
    first = [s for role, _, s in llm.calls if role == "executor"][0].model_json_schema()["$defs"]
    assert first["get_order_detailsArgs"]["properties"]["order_id"]["anyOf"][0]["const"] == "#T0000002"
    assert llm.pending() == {}


def test_an_orders_look_up_also_reads_the_products_of_the_items_the_message_names():
    from chops.pipeline.lookups import follow_ups

    read = OPERATIONS["get_order_details"]
    # "mug": a word under 4 letters mentions nothing (a sentence's "set" or "pet" would).
    assert follow_ups(read, ORDER, "swap the lamps and the mug please") == [
        ("get_product_details", {"product_id": "p1"})]
    assert follow_ups(read, ORDER, "where is my order?") == []
    # "The item" of an order of one product is that product; of an order of two, none is said.
    single = {**ORDER, "items": [ORDER["items"][0], {**ORDER["items"][0], "item_id": "112"}]}
    assert follow_ups(read, single, "Change the item of my order to red.") == [
        ("get_product_details", {"product_id": "p1"})]
    assert follow_ups(read, single, "where is my order?") == []
    assert follow_ups(read, ORDER, "Change the item of my order to red.") == []
    assert follow_ups(OPERATIONS["get_product_details"], PRODUCT, "the lamp") == []  # declares none
    # The shop's list of products, names by id: the ones the message names are read with it.
    listing = {"products": {"p1": "Desk Lamp", "p2": "Water Bottle", "p3": "Mug"}}
    assert follow_ups(OPERATIONS["list_all_product_types"], listing,
                      "How many water bottles can I buy right now?") == [("get_product_details", {"product_id": "p2"})]
    assert follow_ups(OPERATIONS["list_all_product_types"], listing, "What do you sell?") == []


def test_the_products_of_the_named_items_are_read_in_the_orders_step(shop):  # noqa: F811
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Both come in other options."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "What other options are there for the kettle and the scarf from #T0000003?",
                          turn_key="f:1", conversation_id="f")
    step = next(s for s in result.trace["steps"] if s.get("lookups"))
    assert [(x["operation"], x["args"]) for x in step["lookups"]] == [
        ("get_order_details", {"order_id": "#T0000003"}), ("get_product_details", {"product_id": "p-kettle"}),
        ("get_product_details", {"product_id": "p-scarf"})]
    assert "[3] get_product_details(product_id='p-scarf')" in prompt_text(llm, "executor", -1)
    assert llm.pending() == {}


def test_a_product_only_the_shop_lists_is_read_before_a_question_about_it_is_answered(shop):  # noqa: F811
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "We have 5 chairs."}]})  # read nothing
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "2 kinds of chair are available."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(LEO, "How many different chairs can I buy right now?", turn_key="l:1", conversation_id="l")
    assert result.reply.startswith("2 kinds of chair")
    first = next(s for s in result.trace["steps"] if s.get("role") == "executor")
    assert first["read_first"] and [(x["operation"], x["args"]) for x in first["lookups"]] == [
        ("list_all_product_types", {}), ("get_product_details", {"product_id": "p-chair"})]
    assert "available_variants" in prompt_text(llm, "executor", -1)
    assert llm.pending() == {}
    # A product of the customer's own orders is read from them: no listing (MIA's kettles).
    to_system(llm)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Your kettle is steel."}]})
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Your kettle is steel."}]})
    # She has three, of three materials: one's said of all is redone (``fields.unlike``).
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly",
                                        "answer": "Your kettles are steel, glass and enamel."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "What is my kettle made of?", turn_key="m:1", conversation_id="m")
    assert result.reply.startswith("Your kettles are steel, glass and enamel."), result.reply
    assert not any(x.get("operation") == "list_all_product_types" for s in result.trace["steps"]
                   for x in s.get("lookups") or [])


def test_a_swaps_items_and_new_items_are_those_of_the_products_the_message_names():
    from chops.pipeline.walk import mentions

    assert mentions("the smart thermostat", "Smart Thermostat") and not mentions("the smart thermostat", "Smart Watch")
    assert mentions("my t-shirt", "T-Shirt") and mentions("the luggage", "Luggage Set")
    assert not mentions("set", "Pet Bed") and not mentions("a bed for my pet", "Pet Bed")
    assert mentions("return the keyboard and the pet bed", "Pet Bed") and mentions("two Pet Beds", "Pet Bed")
    # Plurals said as such: not only a final "s" ("scarves" was no "Scarf", "watches" no "Watch").
    for message, name in (("both scarves", "Wool Scarf"), ("the two watches", "Smart Watch"), ("my mice", "Gaming Mouse"),
                          ("the bookshelves", "Bookshelf"), ("the toothbrushes", "Electric Toothbrush"),
                          ("my sunglasses", "Sunglasses"), ("the boots", "Hiking Boots"), ("both hoodies", "Hoodie"),
                          ("the hoodie", "Hoodie"), ("my zip hoodies", "Zip Hoody")):
        assert mentions(message, name), (message, name)
    assert not mentions("the watches", "Wall Clock") and not mentions("my scarves", "Wool Hat")
    # A word ending the head word, said as the thing itself: "watch" of "Wristwatch"; not an option's word.
    for message in ("change my watch to one with a black dial", "both watches, please", "where is my watch?"):
        assert mentions(message, "Wristwatch") and mentions(message, "Smart Watch"), message
    assert not mentions("the glass kettle", "Sunglasses") and not mentions("my wrist hurts", "Wristwatch")
    assert not mentions("a watchful eye", "Wristwatch") and not mentions("cancel my pack", "Backpack")  # too short
    # Another word of the name said as the thing itself: it ends its phrase, not "garden" of "the garden hose".
    for message in ("swap my espresso for the red one", "the espresso, please", "my espressos and the mug",
                    "where is my espresso?"):
        assert mentions(message, "Espresso Machine"), message
    for message in ("the garden hose", "my garden hose for a longer one"):
        assert not mentions(message, "Garden Chair"), message
    mug = {"product_id": "p2", "name": "Mug", "variants": {"555": "blue; $5.00; available"}}
    sources = [PROFILE, ORDER, PRODUCT, mug]
    swap = (OPERATIONS["exchange_delivered_order_items"],)
    offered = options_of(swap, sources)
    assert offered[("exchange_delivered_order_items", "item_ids")] == ("111", "222")  # nothing named: every line
    named = {(op, arg): v for op, arg, v, _ in arg_options(swap, sources, (), "a red lamp instead, please")}
    assert named[("exchange_delivered_order_items", "item_ids")] == ("111",)
    assert named[("exchange_delivered_order_items", "new_item_ids")] == ("333", "444")  # not the mug's 555


def test_a_swaps_new_items_take_one_variant_of_each_product_the_message_names():
    kettle = {"product_id": "p3", "name": "Kettle", "variants": {"555": "blue; $5.00; available",
                                                                "556": "green; $5.00; available"}}
    swap = (OPERATIONS["exchange_delivered_order_items"],)

    def groups(message):
        return {arg: g for _, arg, _, g in arg_options(swap, [PROFILE, ORDER, PRODUCT, kettle], (), message)}

    # The order holds no kettle: any selection of the two, as the model chooses (chops.pipeline.each).
    assert groups("swap the lamp and the kettle")["new_item_ids"] == EachOf((("333", "444"), ("555", "556")))
    assert groups("the lamp only")["new_item_ids"] == ()  # one product: a plain list (two lamp lines may change)
    assert groups("swap something")["new_item_ids"] == ()  # nothing named
    assert groups("swap the lamp and the kettle")["item_ids"] == ()  # the old lines follow the new items (paired)
    returns = (OPERATIONS["return_delivered_order_items"],)  # a return's lines may be of one product twice
    assert all(not g for *_, g in arg_options(returns, [PROFILE, ORDER], (), "return the lamp and the kettle"))

    schema = plan_schema(swap, True, arg_options(swap, [PROFILE, ORDER, PRODUCT, kettle], (), "the lamp and the kettle"))
    call = {"operation": "exchange_delivered_order_items",
            "args": {"order_id": "#W1000001", "item_ids": ["111"], "payment_method_id": "gift_card_1"}}
    for new in (["444"], ["556"], ["333", "555"]):  # any of them, one variant each, in the products' order
        args = schema.model_validate({"calls": [{**call, "args": {**call["args"], "new_item_ids": new}}]}).calls[0].args
        assert args.new_item_ids == new
    tuples = [b for b in str(schema.model_json_schema()).split("prefixItems")[1:]]
    assert len(tuples) == 3  # [lamp], [kettle], [lamp, kettle]: the grammar the engine decodes
    with pytest.raises(ValidationError):  # and only offered values, as ever
        schema.model_validate({"calls": [{**call, "args": {**call["args"], "new_item_ids": ["999"]}}]})


def test_a_swaps_new_items_leave_out_the_item_a_line_already_is_once_the_order_is_known():
    swap = (OPERATIONS["exchange_delivered_order_items"],)
    order = {**ORDER, "items": [{"item_id": "333", "product_id": "p1", "name": "Lamp"}, ORDER["items"][1]]}

    def new_items(message, typed=(), sources=(PROFILE, order, PRODUCT)):
        return {arg: v for _, arg, v, _ in arg_options(swap, list(sources), typed, message)}["new_item_ids"]

    # The order's one lamp is 333: swapping it for itself is refused, so only 444 is offered for it.
    assert new_items("the lamp please", ["#W1000001"]) == ("444", "#W1000001")
    assert new_items("the lamp please") == ("333", "444")  # the profile lists two orders, none typed: not known
    two_lamps = {**order, "items": [order["items"][0], {"item_id": "444", "product_id": "p1", "name": "Lamp"}]}
    assert new_items("the lamps", (), (PROFILE, two_lamps, PRODUCT)) == ("333", "444")  # each may become the other


def test_a_swaps_old_lines_are_the_lines_of_the_new_items_products():
    from chops.pipeline.pairing import paired

    mug = {"product_id": "p2", "name": "Mug", "variants": {"555": "blue; $5.00; available"}}
    sources = [PROFILE, ORDER, PRODUCT, mug]
    exchange = OPERATIONS["exchange_delivered_order_items"]
    swap = {"order_id": "#W1000001", "item_ids": ["222", "111"], "new_item_ids": ["333", "555"],
            "payment_method_id": "gift_card_1"}
    assert paired(exchange, swap, sources) == {**swap, "item_ids": ["111", "222"]}  # crossed pairs put right
    assert paired(exchange, {**swap, "item_ids": ["111", "111"]}, sources)["item_ids"] == ["111", "222"]
    assert paired(exchange, {**swap, "item_ids": ["111", "222"]}, sources) is None  # already right
    # A new item of a product the order does not hold, an order not looked up, or no new items: as proposed.
    assert paired(exchange, {**swap, "new_item_ids": ["333", "999"]}, sources) is None
    assert paired(exchange, {**swap, "order_id": "#W1000002"}, sources) is None
    assert paired(exchange, {**swap, "new_item_ids": None}, sources) is None
    two_lamps = {**ORDER, "items": [ORDER["items"][0], ORDER["items"][0]]}  # one item on two lines
    assert paired(exchange, {**swap, "item_ids": ["111"], "new_item_ids": ["333", "444"]},
                  [two_lamps, PRODUCT])["item_ids"] == ["111", "111"]
    assert paired(OPERATIONS["return_delivered_order_items"], {**swap}, sources) is None  # declares no pairs
    # A line of the order written as the new item: no pair is made of it (it would be that line for itself).
    assert paired(exchange, {**swap, "item_ids": ["222"], "new_item_ids": ["111"]}, sources) is None
    # The same new item over and over (the model repeating itself): once per line of its product.
    looped = {**swap, "item_ids": ["111"] * 10, "new_item_ids": ["333"] * 10}
    assert paired(exchange, looped, sources) == {**swap, "item_ids": ["111"], "new_item_ids": ["333"]}
    assert paired(exchange, looped, [two_lamps, PRODUCT])["new_item_ids"] == ["333", "333"]
    # One line's swap written twice, where the order holds two lines of the product: the model repeating itself,
    # not the other line (told "the 17-inch laptop", the 1.5B wrote the 13-inch one's swap twice; train task 35).
    lamps = {**ORDER, "items": [ORDER["items"][0], {"item_id": "112", "product_id": "p1", "name": "Lamp"}]}
    twice = {**swap, "item_ids": ["111", "111"], "new_item_ids": ["333", "333"]}
    assert paired(exchange, twice, [lamps, PRODUCT]) == {**swap, "item_ids": ["111"], "new_item_ids": ["333"]}
    both = {**swap, "item_ids": ["111", "112"], "new_item_ids": ["333", "333"]}
    assert paired(exchange, both, [lamps, PRODUCT]) is None  # each line written: both changed


def test_the_executors_crossed_swap_runs_with_the_lines_of_its_new_items(shop):  # noqa: F811
    agent, _, llm = shop
    script_kettle_swap(llm, "exchange_delivered_order_items", ["s-silk-red"])
    # (The message names no item, so every line is offered and the model can cross them.)
    result = agent.handle(MIA, "Swap the first thing in #T0000003 for the enamel option, gift card for the difference",
                          turn_key="p:1", conversation_id="p")
    assert result.outcome == "pending_confirmation" and result.args["item_ids"] == ["k-glass-1l"]
    step = next(s for s in result.trace["steps"] if s.get("paired"))
    assert step["paired"][0]["proposed"]["item_ids"] == ["s-silk-red"]
    assert llm.pending() == {}


def test_two_lines_of_one_product_are_told_apart_by_the_price_the_customer_compares():
    speakers = {"order_id": "#W1000003", "status": "delivered", "items": [
        {"item_id": "s1", "product_id": "p9", "name": "Bluetooth Speaker", "options": "color: red", "price": 80.5},
        {"item_id": "s2", "product_id": "p9", "name": "Bluetooth Speaker", "options": "color: red", "price": 95.0},
        {"item_id": "m1", "product_id": "p2", "name": "Teapot", "options": "color: white", "price": 9.5}]}
    ret = (OPERATIONS["return_delivered_order_items"],)

    def lines(message):
        return {arg: v for _, arg, v, _ in arg_options(ret, [PROFILE, speakers], (), message)}["item_ids"]

    assert lines("I'd like to send back the pricier speaker") == ("s2",)
    assert lines("I got two speakers but need one: return the cheaper one") == ("s1",)
    assert lines("Return the speaker that's more expensive. And tell me all the lamp options.") == ("s2",)
    assert lines("return the less expensive speaker and the teapot") == ("s1", "m1")
    assert lines("please return the speaker") == ("s1", "s2")  # nothing tells them apart
    assert lines("return both speakers, the dearer one is broken") == ("s1", "s2")  # both
    assert lines("return the cheapest teapot") == ("m1",)  # one line of it: nothing to tell apart

    def later(message, *earlier):
        return {arg: v for _, arg, v, _ in arg_options(ret, [PROFILE, speakers], (), message,
                                                        earlier=earlier)}["item_ids"]

    # A message naming none of the lines is read with the newest earlier message of the request that names some.
    first = "I got two speakers and only need one, so return the pricier one, refund to my credit card"
    assert later("OK, refund it to my gift card then", first) == ("s2",)
    assert later("to the gift card then", "thanks", first, "Return the teapot") == ("s2",)
    assert later("Return the teapot instead", first) == ("m1",)  # named now: as said now
    assert later("OK, refund it to my gift card then") == ("s1", "s2", "m1")  # nothing named before


@pytest.mark.parametrize("request_text, returned", [
    ("Return both scarfs and the lamp", ["222", "111", "223"]),
    ("I want all of the scarfs back, and the lamp", ["222", "111", "223"]),
    ("Return the blue scarf and the lamp", None),  # one of them
    ("Return both: the scarf and the lamp", None),  # "both" of no one product
    ("I got two scarfs; return the torn scarf and the lamp", None),  # a number, then one of them
])
def test_every_line_of_a_product_the_request_asks_all_of_is_listed(request_text, returned):
    from chops.pipeline.together import all_of_them

    ret = OPERATIONS["return_delivered_order_items"]
    scarves = {**ORDER, "items": [{"item_id": "111", "product_id": "p1", "name": "Lamp"},
                                  {"item_id": "222", "product_id": "p2", "name": "Scarf"},
                                  {"item_id": "223", "product_id": "p2", "name": "Scarf"}]}
    args = {"order_id": "#W1000001", "item_ids": ["222", "111"], "payment_method_id": "gift_card_1"}
    found = all_of_them(ret, args, [scarves], request_text)
    assert (found and found["item_ids"]) == returned
    assert all_of_them(ret, {**args, "item_ids": ["222", "223", "111"]}, [scarves], request_text) is None


def test_a_swaps_old_line_named_by_its_products_id_is_that_line():
    from chops.pipeline.pairing import by_product

    swap = OPERATIONS["modify_pending_order_items"]
    pending = {**ORDER, "status": "pending", "items": [*ORDER["items"], {"item_id": "112", "product_id": "p1",
                                                                          "name": "Lamp"}]}
    args = {"order_id": "#W1000001", "item_ids": ["p2"], "new_item_ids": ["555"], "payment_method_id": "gift_card_1"}
    assert by_product(swap, args, [pending]) == {**args, "item_ids": ["222"]}  # the order's one mug
    assert by_product(swap, {**args, "item_ids": ["p1"]}, [pending]) is None  # two lamps: which one is not said
    assert by_product(swap, {**args, "item_ids": ["222"]}, [pending]) is None  # a line already
    assert by_product(swap, {**args, "item_ids": ["p9"]}, [pending]) is None  # no line of that product
    assert by_product(OPERATIONS["return_delivered_order_items"], args, [pending]) is None  # no swap


def test_a_list_of_an_orders_lines_holds_each_no_more_often_than_the_order():
    from chops.pipeline.pairing import capped

    ret = OPERATIONS["return_delivered_order_items"]
    two = {**ORDER, "items": [*ORDER["items"], ORDER["items"][1]]}  # the mug on two lines
    args = {"order_id": "#W1000001", "item_ids": ["111", "111", "222", "222", "222"], "payment_method_id": "gift_card_1"}
    assert capped(ret, args, [two])["item_ids"] == ["111", "222", "222"]
    assert capped(ret, {**args, "item_ids": ["111", "999"]}, [two]) is None  # no line of 999: the platform says so
    assert capped(ret, {**args, "order_id": "#W1000002"}, [two]) is None  # an order not read: as proposed
    assert capped(OPERATIONS["exchange_delivered_order_items"], {**args, "new_item_ids": ["333"] * 5}, [two]) is None


@pytest.mark.parametrize("request_text, proposed, returned", [
    ("Return the lamp, the kettle and the scarf I got", ["111", "111", "222"], ["111", "222", "333"]),
    ("Send back my scarf, the kettle and the lamp", ["222", "222", "222"], ["222", "111", "333"]),
    ("Send back my scarf and the kettle", ["222", "222", "222"], None),  # two repeats, one line named and left out
    ("Return the lamp and the scarf", ["111", "111", "222"], None),  # no line named and left out
    ("Return the lamp, the kettle and the scarf", ["111", "222"], None),  # nothing repeated: as proposed
])
def test_a_line_the_model_wrote_twice_is_the_one_named_and_left_out(request_text, proposed, returned):
    from chops.pipeline.pairing import capped
    from chops.pipeline.together import in_place_of_repeats

    ret = OPERATIONS["return_delivered_order_items"]
    three = {**ORDER, "items": [{"item_id": "111", "product_id": "p1", "name": "Lamp"},
                                {"item_id": "222", "product_id": "p2", "name": "Scarf"},
                                {"item_id": "333", "product_id": "p3", "name": "Kettle"}]}
    args = {"order_id": "#W1000001", "item_ids": proposed, "payment_method_id": "gift_card_1"}
    kept = capped(ret, args, [three]) or args
    found = in_place_of_repeats(ret, args, kept, [three], request_text)
    assert (found and found["item_ids"]) == returned


@pytest.mark.parametrize("request_text, returned", [
    ("I'd like to return everything I just bought except the lamp", ["222", "223"]),
    ("Please send back all the items but not the scarfs", ["111"]),
    ("Return everything from that order apart from the scarf, thanks", ["111"]),
    ("Return everything but I want to keep the lamp", ["222", "223"]),
    ("I want to send back all the stuff I received except the lamp, which I'm keeping", ["222", "223"]),  # own7
    ("Return all I bought apart from the lamp", ["222", "223"]),
    ("Please return all the stuff in that order", ["111", "222", "223"]),
    ("Everything was fine but the lamp is broken, return it", None),  # no exception: a story
    ("Return everything except the teapot", None),  # names none of the order's lines: as proposed
    ("Return everything except the lamp and the scarfs", None),  # nothing would be left
    ("Fine, then return everything in that order and refund it all to my gift card", ["111", "222", "223"]),
    ("Please return all the items of that order", ["111", "222", "223"]),
    ("I want to return the whole order.", ["111", "222", "223"]),
    ("Everything else is fine. Return the scarf", None),  # "everything" of a story, not of what to return
    ("Return everything I bought that's not for my kitchen", None),  # an exception in other words
    ("Don't return everything, just the scarf", None),
    ("I'd like to return everything I bought that's for the kitchen", None),  # narrowed
    ("Return everything from my last order, please", ["111", "222", "223"]),
    ("Return the scarf. Everything in my other order can stay", None),  # the sentence asking names no return
])
def test_everything_or_everything_but_the_products_named_after_an_exception_is_listed(request_text, returned):
    from chops.pipeline.together import all_but

    ret = OPERATIONS["return_delivered_order_items"]
    three = {**ORDER, "items": [{"item_id": "111", "product_id": "p1", "name": "Lamp"},
                                {"item_id": "222", "product_id": "p2", "name": "Scarf"},
                                {"item_id": "223", "product_id": "p2", "name": "Scarf"}]}
    args = {"order_id": "#W1000001", "item_ids": ["222"], "payment_method_id": "gift_card_1"}  # one scarf proposed
    found = all_but(ret, args, [three], request_text)
    assert (found and found["item_ids"]) == returned


def test_the_order_to_read_is_the_one_named_by_its_place_among_the_customers():
    offered = (OPERATIONS["get_order_details"], OPERATIONS["cancel_pending_order"])
    profile = {**PROFILE, "orders": ["#W1000001", "#W1000002", "#W1000003"], "statuses": [
        {"order_id": "#W1000001", "status": "delivered", "names": ["Grill"]},
        {"order_id": "#W1000002", "status": "pending", "names": ["Vase"]},
        {"order_id": "#W1000003", "status": "delivered", "names": ["Desk Lamp"]}]}
    for message, expected in [("how much did I pay for the order I placed most recently?", ("#W1000003",)),
                              ("what's in my latest order", ("#W1000003",)),
                              ("when did my very first order ship?", ("#W1000001",)),
                              ("cancel my most recent order", ("#W1000002",)),  # of the pending ones
                              ("my last two orders", ("#W1000001", "#W1000002", "#W1000003")),  # a count
                              ("what did my recent orders cost?", ("#W1000001", "#W1000002", "#W1000003")),  # plural
                              ("the grill from my last order", ("#W1000001",)),  # the names said first
                              ("where is my order?", ("#W1000001", "#W1000002", "#W1000003"))]:
        assert options_of_read(offered, profile, message) == expected, message


@pytest.mark.parametrize("typed, values, expected", [
    ("30-50", ["7233192239", "6171242004"], False),  # a weight range is no item id
    ("1000", ["7233192239"], False),  # nor a count
    ("10:30", ["#W1090976"], False),
    ("4107812777", ["7233192239"], True),  # an item id typed
    ("#W1090976", ["#W1090976", "#W2000000"], True),
    ("12-34", ["12-34"], True),  # a value of that very shape
    ("gift_card_12", ["gift_card_99"], True),  # not made of numbers alone
])
def test_a_typed_number_is_offered_only_where_a_value_has_its_shape(typed, values, expected):
    from chops.pipeline.choices import _may_be
    assert _may_be(typed, values) is expected
