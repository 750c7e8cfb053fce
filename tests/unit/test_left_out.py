"""What the message names that a plan leaves unchanged (``chops.pipeline.left_out``), shown to the verifier: on
the shop's operations and made-up orders."""

from __future__ import annotations

from apis.retail.registry import OPERATIONS
from chops.llm import ScriptedLLM
from chops.pending import PendingChanges
from chops.pipeline import Agent
from chops.pipeline.left_out import left_out
from chops.settings import get_settings
from tests.unit.pipeline_support import FakeIndex, call, prompt_text, to_system, verdict
from tests.unit.retail_support import MIA, load_shop
from tests.unit.test_lookup_confirm import Approvals

EXCHANGE, CANCEL = OPERATIONS["exchange_delivered_order_items"], OPERATIONS["cancel_pending_order"]
ORDER = {"order_id": "#W0000042", "status": "delivered", "items": [
    {"item_id": "lamp-blue", "product_id": "p-lamp", "name": "Desk Lamp", "options": "color: blue"},
    {"item_id": "rug-grey", "product_id": "p-rug", "name": "Carpet", "options": "color: grey"},
    {"item_id": "vase-tall", "product_id": "p-vase", "name": "Vase", "options": "size: tall"}]}
PENDING = {"order_id": "#W0000043", "status": "pending", "items": [
    {"item_id": "mug-red", "product_id": "p-mug", "name": "Coffee Mug", "options": "color: red"}]}
LAMP = {"product_id": "p-lamp", "name": "Desk Lamp", "variants": {"lamp-blue": "blue; $20.00; available",
                                                                  "lamp-green": "green; $21.00; available"}}
PROFILE = {"orders": [{"order_id": "#W0000042", "names": ["Desk Lamp", "Carpet", "Vase"]},
                      {"order_id": "#W0000043", "names": ["Coffee Mug"]}]}
SOURCES = [PROFILE, ORDER, PENDING, LAMP]


def swap(*pairs: tuple[str, str]) -> tuple:
    return EXCHANGE, {"order_id": "#W0000042", "item_ids": [a for a, _ in pairs], "new_item_ids": [b for _, b in pairs],
                      "payment_method_id": "gift_card_1"}


def test_a_line_the_message_names_and_no_step_changes_is_left_out():
    message = "Please exchange the desk lamp for a green one, and the carpet for a bigger one"
    assert left_out([swap(("lamp-blue", "lamp-green"))], SOURCES, message) == ["Carpet"]
    assert left_out([swap(("lamp-blue", "lamp-green"), ("rug-grey", "rug-grey"))], SOURCES, message) == []
    # A line nobody named is no concern, and a plan with no write is not checked.
    assert left_out([swap(("lamp-blue", "lamp-green"))], SOURCES, "the desk lamp in green please") == []
    assert left_out([], SOURCES, message) == []


def test_a_step_that_takes_a_whole_order_changes_every_line_of_it():
    message = "Exchange the lamp for the green one and cancel the order with the coffee mug"
    cancel = (CANCEL, {"order_id": "#W0000043", "reason": "no longer needed"})
    assert left_out([swap(("lamp-blue", "lamp-green")), cancel], SOURCES, message) == []
    assert left_out([swap(("lamp-blue", "lamp-green"))], SOURCES, message) == ["Coffee Mug"]


def test_the_verifier_is_shown_what_the_plan_leaves_out(sqlite_url, monkeypatch):
    monkeypatch.setenv("CHOPS_VERIFIER_REASON", "operations")  # the default: a quick score first, where allowed
    engine, api = load_shop(sqlite_url)
    llm = ScriptedLLM()
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals(),
                  pending=PendingChanges(engine, ttl_s=600))
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=["k-steel-1l"], payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(2, "Only the kettle; the scarf was asked for too."))
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003",
                                 item_ids=["k-glass-1l", "s-silk-red"], new_item_ids=["k-steel-1l", "s-wool-red"],
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", {"score": 9})
    result = agent.handle(MIA, "In order #T0000003 I want to exchange the kettle and the scarf, both for new ones",
                          turn_key="l:1", conversation_id="l")
    first, second = prompt_text(llm, "verifier", 0), prompt_text(llm, "verifier", 1)
    # Shown the scarf, the verifier gave its reasoned verdict at once (no quick score), and the retry took both.
    assert "Named in the message but changed by no step: Scarf" in first and "Give the score only" not in first
    assert "changed by no step" not in second and "Give the score only" in second
    assert result.iterations == 2 and result.args["item_ids"] == ["k-glass-1l", "s-silk-red"] and llm.pending() == {}
    engine.dispose()
