"""An answer about a record the request names is not taken before that record is read (``lookups.unread_named``), nor
a write taking a value of a record before that one is read (``lookups.unread_sources``):
the 1.5B, having read another order, answered "the skateboard is already the 28 inch one" without reading the order
holding it (own5). Scripted model, the made-up shop."""

from __future__ import annotations

from tests.unit.pipeline_support import call, prompt_text, to_system, verdict
from tests.unit.retail_support import MIA, shop_document
from tests.unit.test_retail_agent import shop, shop_of  # noqa: F401  (fixture)

ANSWER = {"calls": [{"operation": "AnswerDirectly", "answer": "Your chair is the white one already."}]}


def test_an_answer_before_the_order_holding_the_named_product_is_read_is_asked_again_after_reading_it(shop):
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("executor", ANSWER)  # no look-up: the order holding the chair was never read
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Your chair is the black one."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Is the chair I ordered the white one?", turn_key="f:1", conversation_id="f")
    assert "get_order_details(order_id='#T0000002')" not in prompt_text(llm, "executor", 0)
    assert "get_order_details(order_id='#T0000002')" in prompt_text(llm, "executor", 1)
    assert result.reply.startswith("Your chair is the black one.") and llm.pending() == {}
    executor = [s for s in result.trace["steps"] if s["role"] == "executor"]
    assert executor[0].get("read_first") is True and executor[0]["lookups"][0]["operation"] == "get_order_details"


def test_an_answer_after_the_order_was_read_or_naming_no_product_is_taken_as_it_is(shop):
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", ANSWER)
    llm.enqueue("verifier", verdict(9))
    read = agent.handle(MIA, "Is the chair I ordered the white one?", turn_key="g:1", conversation_id="g")
    assert read.reply.startswith("Your chair is the white one already.")
    assert [s["role"] for s in read.trace["steps"]].count("executor") == 2
    to_system(llm)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "You have nine orders."}]})
    llm.enqueue("verifier", verdict(9))
    counted = agent.handle(MIA, "How many orders do I have?", turn_key="h:1", conversation_id="h")
    assert counted.reply.startswith("You have nine orders.") and llm.pending() == {}



def test_a_write_taking_a_value_of_another_order_waits_for_it_to_be_read_and_changes_the_order_asked(sqlite_url):
    document = shop_document()
    source = next(o for o in document["orders"].values() if o["order_id"] == "#T0000005")
    source["address"] = {**source["address"], "address1": "5 Oak Lane"}
    agent, engine, llm = shop_of(sqlite_url, document)
    to_system(llm)
    home = {"address1": "7 Lark Street", "address2": "Unit 2", "city": "Testville", "state": "ZZ", "country": "USA",
            "zip": "11111"}
    # Not having read #T0000005, the model takes the profile's address for its own and changes the source order.
    llm.enqueue("executor", call("modify_pending_order_address", order_id="#T0000005", **home))
    llm.enqueue("executor", call("modify_pending_order_address", order_id="#T0000005",
                                 **{**home, "address1": "5 Oak Lane", "address2": ""}))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "For order #T0000002, please make the shipping address the same as order #T0000005.",
                          turn_key="s:1", conversation_id="s")
    assert "get_order_details(order_id='#T0000005')" not in prompt_text(llm, "executor", 0)
    assert "get_order_details(order_id='#T0000005')" in prompt_text(llm, "executor", 1)
    executor = [s for s in result.trace["steps"] if s["role"] == "executor"]
    assert executor[0].get("read_first") is True
    assert executor[1]["args"]["order_id"] == "#T0000002" and executor[1]["of_the_other"][0]["source"]["order_id"] \
        == "#T0000005"
    assert result.outcome == "pending_confirmation" and "5 Oak Lane" in result.reply and llm.pending() == {}
    engine.dispose()
