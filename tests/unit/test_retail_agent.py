"""The retail pack through the agent (scripted model, made-up shop on SQLite): the customer asks, the executor
looks the order up, proposes the write, the change is described and committed only on the customer's yes;
another customer's order is never touched."""

from __future__ import annotations

import pytest

from apis.retail import loader
from apis.retail.pack import RetailPack
from chops.llm import ScriptedLLM
from chops.pending import PendingChanges
from chops.pipeline import Agent
from chops.settings import get_settings
from tests.unit.pipeline_support import FakeIndex, call, prompt_text, to_system, verdict
from tests.unit.retail_support import MIA, balance, load_shop, order
from tests.unit.test_lookup_confirm import YES, Approvals


@pytest.fixture
def shop(sqlite_url):
    engine, api = load_shop(sqlite_url)
    llm = ScriptedLLM()
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals(),
                  pending=PendingChanges(engine, ttl_s=600))
    yield agent, engine, llm
    engine.dispose()


def test_a_cancel_is_looked_up_described_and_committed_on_yes(shop):
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, "Please cancel order #T0000002, I ordered it by mistake", turn_key="r:1",
                         conversation_id="r")
    assert "Chair" in prompt_text(llm, "executor", 1)  # the look-up's result fed the next step
    assert asked.outcome == "pending_confirmation" and not asked.committed
    assert "status pending → cancelled" in asked.reply and "balance 100.0 → 220.0" in asked.reply
    assert order(engine, "#T0000002")["status"] == "pending" and balance(engine, MIA, "gift_card_mia") == 100.0
    llm.enqueue("classifier", YES)
    done = agent.handle(MIA, "yes please", turn_key="r:2", conversation_id="r")
    assert done.committed and done.outcome == "ok"
    assert order(engine, "#T0000002")["status"] == "cancelled" and balance(engine, MIA, "gift_card_mia") == 220.0


def test_the_shops_executor_sees_what_each_order_holds_before_any_look_up(sqlite_url):
    engine, api = load_shop(sqlite_url)
    llm = ScriptedLLM()
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals(),
                  pending=PendingChanges(engine, ttl_s=600), prompts=RetailPack.prompts)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="no longer needed"))
    llm.enqueue("verifier", verdict(9))
    agent.handle(MIA, "cancel the chair I ordered, I don't need it", turn_key="p:1", conversation_id="p")
    first = prompt_text(llm, "executor", 0)
    assert "#T0000002 (pending, to Testville: Chair)" in first and "gift_card_mia (gift card" in first  # the profile's overview
    engine.dispose()


def test_another_customers_order_is_not_found_and_nothing_changes(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000008"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000008", reason="no longer needed"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Cancel order #T0000008, no longer needed", turn_key="r:1", conversation_id="r")
    assert "no order #T0000008 on your account" in prompt_text(llm, "executor", 1)
    assert not result.committed and loader.export(engine) == before
