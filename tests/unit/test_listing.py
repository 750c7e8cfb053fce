"""Options heard first (``chops.pipeline.listing``): a swap whose new item the customer asked to choose from a list is
asked about with the variants that fit and their prices, and their answer picks one; made-up shop data."""

from __future__ import annotations

import pytest

from apis.retail import loader
from apis.retail.registry import OPERATIONS
from chops.pipeline.choices import fitting
from chops.pipeline.asking import asks_options
from tests.unit.pipeline_support import answering, call, to_system, verdict
from tests.unit.retail_support import MIA
from tests.unit.test_retail_agent import shop  # noqa: F401  (fixture)

EXCHANGE = OPERATIONS["exchange_delivered_order_items"]


@pytest.mark.parametrize("request_text", [
    "Swap my lamp for a brighter one. If there's more than one, tell me all the options and their prices.",
    "I'd like a different colour of the mug I got. What are my choices?",
    "Please list the available ones before I decide.",
    "Can you show me what's available first?",
    "Let me know the alternatives, then I'll pick.",
    "Which versions do you have in blue?",
    "Tell me all the 13-inch options, with prices.",
    "Could you show me the cordless black models?",
    "台灯有哪些款式可以换？请告诉我价格。",
])
def test_a_request_to_hear_the_options_is_told_from_one_that_chooses(request_text):
    assert asks_options(request_text)


@pytest.mark.parametrize("request_text", [
    "Exchange the lamp for the brass one, please.",
    "I want the option with the longer cable.",
    "Which one is cheaper, the lamp or the mug?",
    "What's the price of the lamp I ordered?",
    "Cancel just the lamps (I forget which ones) and keep the rest.",
    "Please send me the new ones by Friday.",
])
def test_a_request_that_chooses_or_asks_something_else_asks_for_no_list(request_text):
    assert not asks_options(request_text)


ORDER = {"order_id": "#T0000021", "status": "delivered", "items": [
    {"item_id": "lamp-brass-s", "product_id": "p-lamp", "name": "Desk Lamp", "options": "finish: brass, size: small",
     "price": 30.0}]}
LAMP = {"product_id": "p-lamp", "name": "Desk Lamp", "options": "finish, size", "variants": {
    "lamp-brass-s": "brass, small; $30.00; available",
    "lamp-brass-l": "brass, large; $42.00; available",
    "lamp-black-l": "black, large; $39.50; available",
    "lamp-white-l": "white, large; $41.00; NOT available",
    "lamp-black-s": "black, small; $28.00; available"}}
ARGS = {"order_id": "#T0000021", "item_ids": ["lamp-brass-s"], "new_item_ids": ["lamp-black-l"],
        "payment_method_id": "paypal_mia"}


@pytest.mark.parametrize("said, fit", [
    # a large one: every large one sold now (not the white one, not sold; not the small line replaced)
    ("Exchange my desk lamp for a large one. What are my options?", ["lamp-brass-l", "lamp-black-l"]),
    ("Exchange my desk lamp for a bigger one and tell me the options", ["lamp-brass-l", "lamp-black-l"]),
    ("Exchange my desk lamp for a large one, the cheapest", ["lamp-black-l"]),
    ("Exchange my desk lamp for a black one", ["lamp-black-l", "lamp-black-s"]),
    # an old feature said to keep is kept; one said beside another in its place (the new finish) is not
    ("Exchange my desk lamp for a larger one, still brass. What are my options?", ["lamp-brass-l"]),
    ("Exchange my brass desk lamp for a black one, what are the options?", ["lamp-black-l", "lamp-black-s"]),
])
def test_the_variants_that_fit_are_those_the_words_describe_before_the_nearest_is_taken(said, fit):
    fitted = fitting(EXCHANGE, ARGS, [ORDER, LAMP], [said])
    assert {name: f.values for name, f in fitted.items()} == {"Desk Lamp": fit}
    assert fitted["Desk Lamp"].places == ["finish", "size"]


def _propose_kettle(llm, new_item: str, answer: bool = False) -> None:
    """Script the model reading #T0000003 (its kettle's product read along) and proposing the kettle's exchange."""
    if answer:
        answering(llm)
    else:
        to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=[new_item], payment_method_id="credit_card_mia"))


def test_the_options_asked_for_are_listed_with_prices_and_the_answer_picks_one(shop):  # noqa: F811
    agent, engine, llm = shop
    before = loader.export(engine)
    first = ("Please exchange the kettle from #T0000003 for another 1L one, any difference to my credit card. What are "
             "my options and their prices?")
    _propose_kettle(llm, "k-steel-1l")  # the agent's own question: no verifier call
    asked = agent.handle(MIA, first, turn_key="o:1", conversation_id="o")
    assert asked.outcome == "refused_missing_args" and not asked.committed
    # the 1L kettles sold now but the glass one replaced, each with its price; the 2L one is not sold now
    assert "(1) material: steel, capacity: 1L, $40.00; (2) material: enamel, capacity: 1L, $38.99" in asked.reply
    assert "Which one would you like?" in asked.reply and "$60.00" not in asked.reply
    assert asked.args["new_item_ids"] is None and asked.args["item_ids"] == ["k-glass-1l"]
    assert loader.export(engine) == before
    # "the cheaper one": the model proposed the steel one again; the grammar offers the enamel one alone
    _propose_kettle(llm, "k-red-1l", answer=True)
    llm.enqueue("verifier", verdict(9))
    done = agent.handle(MIA, "The cheaper one, please.", history=[asked.to_record(first)], turn_key="o:2",
                        conversation_id="o")
    assert done.outcome == "pending_confirmation" and done.args["new_item_ids"] == ["k-red-1l"]
    assert done.args["item_ids"] == ["k-glass-1l"] and "material: glass -> enamel" in done.reply
    assert loader.export(engine) == before and llm.pending() == {}


def test_options_are_listed_once_in_a_conversation(shop):  # noqa: F811
    agent, engine, llm = shop
    first = ("Please exchange the kettle from #T0000003 for another 1L one, any difference to my credit card. What are "
             "my options and their prices?")
    _propose_kettle(llm, "k-steel-1l")
    asked = agent.handle(MIA, first, turn_key="n:1", conversation_id="n")
    assert asked.outcome == "refused_missing_args"
    # an answer that singles out none: the model's choice is described for the customer's yes, not the list again
    _propose_kettle(llm, "k-steel-1l", answer=True)
    llm.enqueue("verifier", verdict(9))
    done = agent.handle(MIA, "Hmm, whichever you think is best.", history=[asked.to_record(first)], turn_key="n:2",
                        conversation_id="n")
    assert done.outcome == "pending_confirmation" and done.args["new_item_ids"] == ["k-steel-1l"]


def test_a_swap_asked_for_without_a_list_is_proposed_as_before(shop):  # noqa: F811
    agent, _, llm = shop
    _propose_kettle(llm, "k-steel-1l")
    llm.enqueue("verifier", verdict(9))
    done = agent.handle(MIA, "Please exchange the kettle from #T0000003 for the steel 1L one, using my credit card.",
                        turn_key="s:1", conversation_id="s")
    assert done.outcome == "pending_confirmation" and done.args["new_item_ids"] == ["k-steel-1l"]
