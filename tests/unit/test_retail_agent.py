"""The retail pack through the agent (scripted model, made-up shop on SQLite): the customer asks, the executor
looks the order up, proposes the write, the change is described and committed only on the customer's yes;
another customer's order is never touched."""

from __future__ import annotations

import json
import re

import pytest

from apis.retail import loader
from apis.retail.pack import RetailPack
from chops.i18n import use_catalogs
from chops.llm import ScriptedLLM
from chops.pending import PendingChanges
from chops.pipeline import Agent
from chops.records import TurnRecord
from chops.settings import get_settings
from tests.unit.pipeline_support import FakeIndex, answering, call, plan, prompt_text, to_system, verdict
from tests.unit.retail_support import MIA, balance, load_shop, order, shop_document
from tests.unit.test_lookup_confirm import YES, Approvals


@pytest.fixture
def shop(sqlite_url):
    engine, api = load_shop(sqlite_url)
    llm = ScriptedLLM()
    use_catalogs(RetailPack.locale)  # as the wiring (``chops.bootstrap.build_agent``) does
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals(),
                  pending=PendingChanges(engine, ttl_s=600))
    yield agent, engine, llm
    engine.dispose()


def shop_of(url: str, document: dict) -> tuple[Agent, object, ScriptedLLM]:
    """(agent, engine, scripted llm) over the made-up shop as ``document`` holds it (a changed ``shop_document()``)."""
    engine, api = load_shop(url, document)
    llm = ScriptedLLM()
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals(), pending=PendingChanges(engine, 600))
    return agent, engine, llm


def propose_cancel(llm: ScriptedLLM, order_id: str, reason: str, verified: bool = True) -> None:
    """Script the model reading ``order_id`` and proposing its cancel (and, ``verified``, the verifier passing it)."""
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id=order_id))
    llm.enqueue("executor", call("cancel_pending_order", order_id=order_id, reason=reason))
    if verified:
        llm.enqueue("verifier", verdict(9))


def ask_to_cancel(agent: Agent, llm: ScriptedLLM, text: str, key: str):
    """The customer asks to cancel #T0000002 with ``text``; the scripted model looks it up and proposes the cancel."""
    propose_cancel(llm, "#T0000002", "ordered by mistake")
    return agent.handle(MIA, text, turn_key=f"{key}:1", conversation_id=key)


def test_a_cancel_is_looked_up_described_and_committed_on_yes(shop):
    agent, engine, llm = shop
    asked = ask_to_cancel(agent, llm, "Please cancel order #T0000002, I ordered it by mistake", "r")
    assert "Chair" in prompt_text(llm, "executor", 1)  # the look-up's result fed the next step
    assert asked.outcome == "pending_confirmation" and not asked.committed
    # The pack's words for it (not "cancel_pending_order"), and its dry run's own account, not its field changes.
    assert "- cancel your order\n  Order #T0000002 is cancelled (ordered by mistake). Refund: $120.00 to gift_card_mia" \
        in asked.reply
    assert "gift_card_mia now holds $220.00" in asked.reply and "→" not in asked.reply
    assert order(engine, "#T0000002")["status"] == "pending" and balance(engine, MIA, "gift_card_mia") == 100.0
    llm.enqueue("classifier", YES)
    done = agent.handle(MIA, "yes please", turn_key="r:2", conversation_id="r")
    assert done.committed and done.outcome == "ok"
    assert order(engine, "#T0000002")["status"] == "cancelled" and balance(engine, MIA, "gift_card_mia") == 220.0


def test_a_write_asked_for_again_after_its_commit_is_told_as_done_not_redone(shop):
    agent, engine, llm = shop
    first = "Please cancel order #T0000002, I ordered it by mistake"
    asked = ask_to_cancel(agent, llm, first, "d")
    llm.enqueue("classifier", YES)
    done = agent.handle(MIA, "yes please", turn_key="d:2", conversation_id="d", history=[asked.to_record(first)])
    assert done.committed
    history = [asked.to_record(first), done.to_record("yes please")]
    propose_cancel(llm, "#T0000002", "ordered by mistake", verified=False)  # nothing to verify: no model judges it
    again = agent.handle(MIA, "Then cancel the chair order, please", turn_key="d:3", conversation_id="d",
                         history=history)
    assert again.reply.startswith("That was already done earlier in this conversation: Order #T0000002 is cancelled")
    assert "couldn't" not in again.reply and not again.committed and llm.pending() == {}
    assert order(engine, "#T0000002")["status"] == "cancelled"


def test_a_cancel_of_an_order_the_customer_does_not_hold_is_refused_not_asked_for_its_reason(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)  # Leo's order, typed by Mia: asked for the reason, she would be asked again and again
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000008", reason=None))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "My friend Leo asked me to cancel his order #T0000008, can you?", turn_key="u:1",
                          conversation_id="u")
    assert result.outcome == "not_in_system" and not result.committed
    assert "There is no order #T0000008 on your account" in result.reply and "reason" not in result.reply
    assert loader.export(engine) == before
    # An order of hers, its reason not said: asked for it, as before
    to_system(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason=None))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, "Please cancel #T0000002", turn_key="v:1", conversation_id="v")
    assert asked.outcome == "refused_missing_args" and "the reason" in asked.reply


def test_a_chinese_request_is_described_in_the_packs_chinese_words(shop):
    agent, _, llm = shop
    asked = ask_to_cancel(agent, llm, "请取消订单 #T0000002，我下错单了", "z")
    assert asked.outcome == "pending_confirmation"
    # the reason is a word of the catalog too (``Operation.worded``): said in Chinese, not "和ordered by mistake"
    assert "- 取消您的订单：#T0000002和误下单" in asked.reply and "cancel_pending_order" not in asked.reply
    assert "status pending → cancelled" in asked.reply  # the shop's message is English: the field changes say it


def test_the_shops_executor_sees_what_each_order_holds_before_any_look_up(sqlite_url):
    engine, api = load_shop(sqlite_url)
    llm = ScriptedLLM()
    use_catalogs(RetailPack.locale)  # as the wiring (``chops.bootstrap.build_agent``) does
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
    propose_cancel(llm, "#T0000008", "no longer needed")
    result = agent.handle(MIA, "Cancel order #T0000008, no longer needed", turn_key="r:1", conversation_id="r")
    assert "no order #T0000008 on your account" in prompt_text(llm, "executor", 1)
    assert not result.committed and loader.export(engine) == before


def look_up_and_answer(agent: Agent, llm: ScriptedLLM, message: str, order_id: str) -> None:
    """``message`` handled with a scripted model that reads ``order_id`` and then answers (no write)."""
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id=order_id))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": f"Order {order_id} is here."}]})
    llm.enqueue("verifier", verdict(9))
    agent.handle(MIA, message, turn_key="l:1", conversation_id="l")


def _offered(llm: ScriptedLLM, index: int) -> str:
    """The JSON schema of the ``index``-th executor call: the operations its plan may name."""
    return json.dumps([c for c in llm.calls if c[0] == "executor"][index][2].model_json_schema())


@pytest.mark.parametrize("message, paying, addressing, own", [
    ("Change the kettle in my pending order #T0000001 to the glass one", False, False, False),
    ("Please cancel order #T0000002, I ordered it by mistake", False, False, False),
    ("Can I pay order #T0000001 with my gift card instead?", True, False, False),
    ("Paying #T0000001 by PayPal would suit me better", True, False, False),
    ("Please charge #T0000001 to my other method", True, False, False),
    ("Also cancel the charger in #T0000001, it goes with the tablet", False, False, False),  # a charger: no payment
    # A swap's price difference is no payment change (train task 21).
    ("Change the kettle in #T0000001 to the glass one and use my gift card for any extra charge", False, False,
     False),
    ("Glass kettle for #T0000001 please, PayPal for the difference", False, False, False),
    ("订单 #T0000001 我想用礼品卡付款", True, False, False),
    # Where a refund goes is no payment change either (train task 13).
    ("Please return the scarf from #T0000003, I'd prefer the refund on PayPal", False, False, False),
    ("退掉订单 #T0000003 的围巾，退款到我的礼品卡", False, False, False),
    ("Ship my pending order #T0000001 to 5 Oak Road, Testville", False, True, False),  # an order's, not theirs
    ("I moved house: my new address is 5 Oak Road", False, True, True),
    ("请把订单 #T0000001 寄到我的新地址", False, True, False),
    ("Please update my address to 5 Oak Road, Testville", False, True, True),
    ("For #T0000001, the address should be the same as order #T0000002", False, True, False),
])
def test_a_payment_or_address_change_is_offered_only_where_the_customer_speaks_of_it(shop, message, paying,
                                                                                     addressing, own):
    agent, _, llm = shop
    look_up_and_answer(agent, llm, message, next(iter(re.findall(r"#T\d+", message)), "#T0000001"))
    assert ("modify_pending_order_payment" in _offered(llm, 0)) is paying
    assert ("modify_pending_order_address" in _offered(llm, 0)) is addressing
    assert ("modify_user_address" in _offered(llm, 0)) is own  # their default address: only as their own
    assert "cancel_pending_order" in _offered(llm, 0)  # the other writes stay offered


def test_arithmetic_is_offered_only_once_a_record_was_read(shop):
    agent, _, llm = shop
    look_up_and_answer(agent, llm, "What would order #T0000002 cost twice over?", "#T0000002")
    assert '"calculate"' not in _offered(llm, 0) and '"calculate"' in _offered(llm, 1)


def _swap_then_return(llm: ScriptedLLM) -> None:
    """Script the kettle of #T0000003 read, its exchange for the steel one ($40) proposed, on the redo its return."""
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("get_product_details", product_id="p-kettle"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=["k-steel-1l"], payment_method_id="credit_card_mia"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))


def test_an_exchange_proposed_for_a_return_is_redone_told_why_and_the_return_described(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    _swap_then_return(llm)
    # "replace" may ask for a swap, so one is offered; the request asks for a return, so the exchange is refused
    result = agent.handle(MIA, "Don't replace the kettle from #T0000003, I just want to return it", turn_key="k:1",
                          conversation_id="k")
    assert "you asked to return, not for other items in place of these" in prompt_text(llm, "executor", 3)
    assert "exchange_delivered_order_items" in _offered(llm, 2) and "exchange_delivered_order_items" not in \
        _offered(llm, 3)  # the swap is not offered to the redo
    assert "cancel_pending_order" in _offered(llm, 2) and "cancel_pending_order" not in _offered(llm, 3)  # the return
    assert result.outcome == "pending_confirmation" and result.operation == "return_delivered_order_items"
    assert [role for role, _, _ in llm.calls].count("verifier") == 1  # the unasked exchange cost no verifier call
    assert loader.export(engine) == before and llm.pending() == {}


@pytest.mark.parametrize("message", [
    "I want to return the kettle from #T0000003",
    "I don't need the kettle from #T0000003 anymore, please return it",
    "Cancel or return the kettle I got, #T0000003",
    "Please return the pricier of my kettles from #T0000003",  # a price compared picks the line
])
def test_a_return_asked_for_with_nothing_a_swap_needs_is_offered_no_swap(shop, message):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, message, turn_key="k:1", conversation_id="k")
    assert all("exchange_delivered_order_items" not in _offered(llm, n) for n in range(2))
    assert "modify_pending_order_items" not in _offered(llm, 1) and "return_delivered_order_items" in _offered(llm, 1)
    assert result.outcome == "pending_confirmation" and result.operation == "return_delivered_order_items"
    assert loader.export(engine) == before and llm.pending() == {}


@pytest.mark.parametrize("message", [
    "Return the kettle from #T0000003, or exchange it for the steel one if that is cheaper",  # a swap's kind
    "Return my kettle from #T0000003 for a bigger one",  # a comparison: a swap said as a return
    "What happens if I return the kettle from #T0000003?",  # a question
])
def test_a_request_that_may_ask_for_a_swap_is_offered_swaps(message):
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.kinds import no_swap_asked
    lines = [{"items": [{"name": "Kettle", "options": "capacity: 1L, material: glass"}]}]
    assert not no_swap_asked(message, [message], OPERATIONS.values(), lines)
    assert no_swap_asked("Return the kettle from #T0000003", ["Return the kettle from #T0000003"],
                         OPERATIONS.values(), lines)


@pytest.mark.parametrize("message", [
    "If the steel kettle is under $30, exchange my kettle from #T0000003 for it; if not, I'll return it",
    "Swap the kettle of #T0000003 for the steel one if it costs less than 30 dollars, otherwise return it please",
])
def test_a_swap_against_the_customers_condition_is_replaced_by_what_they_asked_for_in_that_case(shop, message):
    agent, engine, llm = shop
    before = loader.export(engine)
    _swap_then_return(llm)
    result = agent.handle(MIA, message, turn_key="f:1", conversation_id="f")
    redone = next(s for s in result.trace["steps"] if s.get("role") == "redo")
    assert redone["fallback"].lower().startswith(("i'll return it", "return it please")) \
        and redone["fallback"].endswith(": the Kettle of #T0000003")
    assert redone["fallback"] in prompt_text(llm, "executor", 3)  # the request the redo plans for
    assert "exchange_delivered_order_items" not in _offered(llm, 3)
    assert result.outcome == "pending_confirmation" and result.operation == "return_delivered_order_items"
    # the reply says first why the customer's own fallback was taken: what they asked about was over their bound
    first, _ = result.reply.split("\n\n", 1)
    assert first.startswith("You asked for one ") and first.endswith("and this new item (steel, 1L) costs $40.00.")
    assert loader.export(engine) == before and llm.pending() == {}


def test_a_swap_whose_variant_named_in_a_condition_is_sold_out_is_redone_as_said_for_that_case(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("get_product_details", product_id="p-kettle"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003",
                                 item_ids=["k-glass-1l", "s-silk-red"], new_item_ids=["k-steel-1l", "s-wool-red"],
                                 payment_method_id="credit_card_mia"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["s-silk-red"],
                                 new_item_ids=["s-wool-red"], payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    message = ("Please exchange the kettle from #T0000003 for a steel one and the scarf for a wool one, any difference "
               "to my credit card. If there's no kettle that is steel and 2L, then I'd rather only exchange the scarf.")
    result = agent.handle(MIA, message, turn_key="h:1", conversation_id="h")
    redone = next(s for s in result.trace["steps"] if s.get("role") == "redo")
    # the steel 2L kettle is sold out: the scarf's exchange alone, the swap still offered for it
    assert redone["fallback"] == "I'd rather only exchange the scarf: #T0000003"
    assert "exchange_delivered_order_items" in _offered(llm, 3)
    assert result.outcome == "pending_confirmation" and result.args["item_ids"] == ["s-silk-red"]
    assert result.reply.startswith("No kettle that is steel and 2L is available.")
    assert loader.export(engine) == before and llm.pending() == {}


def gift_card_then(agent: Agent, llm: ScriptedLLM, first: str, key: str):
    """``first`` (a return refused for its refund method) answered with "Fine, refund it to my gift card then"; the
    model reads #T0000003 and proposes its glass kettle's return to the gift card, which the verifier passes."""
    refused = TurnRecord(user_text=first, reply="I couldn't do that: the refund goes to the original payment method "
                         "or a gift card", route="system", operation="return_delivered_order_items",
                         outcome="refused_invalid_arg")
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))
    return agent.handle(MIA, "Fine, refund it to my gift card then", history=[refused], turn_key=f"{key}:2",
                        conversation_id=key)


def test_an_answer_to_a_refusal_naming_no_product_is_about_the_product_named_before(shop):
    agent, engine, llm = shop
    result = gift_card_then(agent, llm, "Return the kettle from #T0000003 and refund it to my paypal", "i")
    offered = json.loads(_offered(llm, 1))
    # the kettle's line alone: "it" is the kettle of the message before (the 1.5B returned the whole order)
    assert "k-glass-1l" in json.dumps(offered) and "s-silk-red" not in json.dumps(offered)
    assert result.outcome == "pending_confirmation" and result.args["item_ids"] == ["k-glass-1l"]


def test_an_answer_to_a_refusal_is_not_asked_which_line_the_request_compared_before(sqlite_url):
    document = shop_document()
    document["orders"]["#T0000004"]["status"] = "delivered"
    document["orders"]["#T0000004"]["items"].append({"name": "Kettle", "product_id": "p-kettle", "price": 40.00,
                                                     "item_id": "k-steel-1l", "options": {"material": "steel",
                                                                                          "capacity": "1L"}})
    agent, engine, llm = shop_of(sqlite_url, document)
    result = gift_card_then(agent, llm, "I got two kettles; return the more expensive one, refund to my paypal", "j")
    # the glass kettle ($45.50) is the dearer of the two: no question which kettle, the return described
    assert result.outcome == "pending_confirmation" and result.args["item_ids"] == ["k-glass-1l"]
    engine.dispose()


def test_a_swap_against_a_condition_with_nothing_said_for_that_case_is_redone_as_asked(shop):
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=["k-steel-1l"], payment_method_id="credit_card_mia"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "The steel kettle costs $40.00."}]})
    llm.enqueue("verifier", verdict(9))
    message = "Exchange my kettle from #T0000003 for the steel one if it's under $30"
    result = agent.handle(MIA, message, turn_key="g:1", conversation_id="g")
    redone = next(s for s in result.trace["steps"] if s.get("role") == "redo")
    assert "fallback" not in redone and result.trace["request"] == message
    assert "exchange_delivered_order_items" in _offered(llm, 2)


@pytest.mark.parametrize("question", [
    "Which scarf did I get in #T0000003, and what colour is it?",
    "One more thing: what is the kettle from #T0000003 made of?",
    "订单 #T0000003 里的水壶是什么材质的?",
])
def test_a_question_naming_no_change_is_offered_the_look_ups_and_the_answer_only(shop, question):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))  # read again: next, the answer alone
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It is the red silk scarf."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, question, turn_key="q:1", conversation_id="q")
    offered = [_offered(llm, n) for n in range(3)]
    assert all("_delivered_order_items" not in o and "cancel_pending_order" not in o for o in offered)
    assert "get_order_details" in offered[0] and "get_order_details" not in offered[2] and "AnswerDirectly" in offered[2]
    assert result.reply.startswith("It is the red silk scarf.") and result.operation is None
    assert loader.export(engine) == before and llm.pending() == {}


@pytest.mark.parametrize("request_", [
    "What is the kettle in #T0000003 made of? I want to return it if it is glass.",
    "Which of my orders can I still cancel?",
])
def test_a_question_that_names_a_change_is_offered_the_writes(request_):
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.asking import only_asks
    assert not only_asks(request_, OPERATIONS.values())


def test_a_plan_that_changes_nothing_is_redone_told_so(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    same = {"address1": "7 Lark Street", "address2": "Unit 2", "city": "Testville", "state": "ZZ", "country": "USA",
            "zip": "11111"}  # the default address already
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000001"))
    llm.enqueue("executor", call("modify_user_address", **same))
    to_system(llm, fresh=False)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "That is your address already."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Make 7 Lark Street, Unit 2, Testville ZZ 11111 my address and ship #T0000001 there",
                          turn_key="n:1", conversation_id="n")
    assert "it changes nothing, that is already so" in prompt_text(llm, "executor", 2)
    assert result.reply.startswith("That is your address already.") and not result.committed
    assert [s["role"] for s in result.trace["steps"]].count("redo") == 1
    assert loader.export(engine) == before and llm.pending() == {}


def test_a_plan_that_changes_nothing_without_a_look_up_is_redone_too(shop):
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("modify_user_address", address1="7 Lark Street", address2="Unit 2", city="Testville",
                                 state="ZZ", country="USA", zip="11111"))  # the default address already
    to_system(llm, fresh=False)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "That is your address already."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Make 7 Lark Street, Unit 2, Testville ZZ 11111 my default address", turn_key="w:1",
                          conversation_id="w")
    assert "it changes nothing, that is already so" in prompt_text(llm, "executor", 1)
    assert result.reply.startswith("That is your address already.") and llm.pending() == {}


def test_a_plan_that_changes_nothing_from_an_earlier_turns_look_ups_is_redone_too(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000001"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It ships to 1 Test Way."}]})
    llm.enqueue("verifier", verdict(9))
    first = agent.handle(MIA, "Where does #T0000001 ship to?", turn_key="e:1", conversation_id="e")
    history = [first.to_record("Where does #T0000001 ship to?")]
    to_system(llm)
    llm.enqueue("executor", call("modify_pending_order_address", order_id="#T0000001", address1="1 Test Way",
                                 address2="", city="Testville", state="ZZ", country="USA", zip="11111"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It ships there already."}]})
    llm.enqueue("verifier", verdict(9))
    again = agent.handle(MIA, "Then ship it to 1 Test Way, Testville ZZ 11111 please", history=history, turn_key="e:2",
                         conversation_id="e")
    assert "it changes nothing, that is already so" in prompt_text(llm, "executor", 3)
    assert again.reply.startswith("It ships there already.") and not again.committed
    assert loader.export(engine) == before and llm.pending() == {}


@pytest.mark.parametrize("message, barred", [
    ("In the order that hasn't shipped, make the scarf blue and the kettle the glass one", True),  # item changes
    ("Could the order that hasn't shipped go to 1 Test Way, Testville ZZ 11111?", True),  # "go to": no word of it
    ("Change the shipping address of #T0000001 to 1 Test Way, Testville ZZ 11111", False),  # the change it names
])
def test_a_plan_that_changes_nothing_is_redone_without_it_where_the_request_does_not_name_it(shop, message, barred):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000001"))
    llm.enqueue("executor", call("modify_pending_order_address", order_id="#T0000001", address1="1 Test Way",
                                 address2="", city="Testville", state="ZZ", country="USA", zip="11111"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It ships there already."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, message, turn_key="z:1", conversation_id="z")
    assert "it changes nothing, that is already so" in prompt_text(llm, "executor", 2)
    # Asked for the scarf's change, the 1.5B proposed the order's address change to the address it had, twice (own5).
    assert ("modify_pending_order_address" in _offered(llm, 2)) is not barred
    assert result.reply.startswith("It ships there already.") and loader.export(engine) == before


def _ask_return(agent, llm, items: list[str], text: str, key: str, fresh: bool = True):
    if fresh:
        to_system(llm)
        llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=items,
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    return agent.handle(MIA, text, history=[], turn_key=key, conversation_id="a")


@pytest.mark.parametrize("answer, returned", [
    ("Hold on, not yet. I also want to return the scarf from that order.", ["k-glass-1l", "s-silk-red"]),
    ("No wait, return the scarf instead.", ["s-silk-red"]),  # nothing added: the new request replaces it
])
def test_a_change_waiting_for_a_yes_that_the_customer_adds_to_keeps_its_lines(shop, answer, returned):
    agent, engine, llm = shop
    first = _ask_return(agent, llm, ["k-glass-1l"], "Return the kettle from #T0000003 to my credit card", "a:1")
    assert first.outcome == "pending_confirmation"
    history = [first.to_record("Return the kettle from #T0000003 to my credit card")]
    llm.enqueue("classifier", {"answer": "something_else"})
    to_system(llm)
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["s-silk-red"],
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    again = agent.handle(MIA, answer, history=history, turn_key="a:2", conversation_id="a")
    assert again.outcome == "pending_confirmation" and again.args["item_ids"] == returned
    assert order(engine, "#T0000003")["status"] == "delivered" and llm.pending() == {}


def test_a_call_refused_in_an_earlier_turn_is_redone_with_its_operation_barred(shop):
    agent, engine, llm = shop
    same = call("modify_pending_order_payment", order_id="#T0000002", payment_method_id="gift_card_mia")
    to_system(llm)
    llm.enqueue("executor", same).enqueue("verifier", verdict(9))
    first = agent.handle(MIA, "Pay #T0000002 with my gift card", turn_key="b:1", conversation_id="b")
    assert first.outcome == "refused_invalid_arg" and "already paid with gift_card_mia" in first.reply
    history = [first.to_record("Pay #T0000002 with my gift card")]
    answering(llm)  # the message completes the refused request, whose route it keeps (``agenda.replaced_values``)
    llm.enqueue("executor", same)  # the very call refused before, no look-up made: redone all the same
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It is paid with your gift card."}]})
    llm.enqueue("verifier", verdict(9))
    again = agent.handle(MIA, "I said pay #T0000002 with my gift card", history=history, turn_key="b:2",
                         conversation_id="b")
    assert again.reply.startswith("It is paid with your gift card") and llm.pending() == {}
    assert "modify_pending_order_payment" in _offered(llm, 1) and "modify_pending_order_payment" not in _offered(llm, 2)
    assert "already paid with gift_card_mia" in prompt_text(llm, "executor", 2)  # told why


@pytest.mark.parametrize("message, products_read", [
    ("I want to swap the kettle from #T0000003 for the steel one", True),
    ("Please change the kettle in #T0000003 to a steel one", True),
    ("I want to return the kettle from #T0000003", False),  # a return: its variants would only invite a swap
])
def test_the_products_of_the_items_named_are_read_with_the_order_for_a_swap_only(shop, message, products_read):
    agent, _, llm = shop
    look_up_and_answer(agent, llm, message, "#T0000003")
    assert "get_order_details(order_id='#T0000003')" in prompt_text(llm, "executor", 1)
    assert ("get_product_details(product_id='p-kettle')" in prompt_text(llm, "executor", 1)) is products_read


def test_the_answer_to_a_question_completes_the_call_asked_about(shop):
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason=None))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, "Cancel my order #T0000002", turn_key="q:1", conversation_id="q")
    assert asked.outcome == "refused_missing_args"
    to_system(llm)
    # Planned afresh, the model names another order; the customer only gave the reason.
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000001", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    done = agent.handle(MIA, "ordered by mistake", history=[asked.to_record("Cancel my order #T0000002")],
                        turn_key="q:2", conversation_id="q")
    assert done.outcome == "pending_confirmation"
    assert done.args == {"order_id": "#T0000002", "reason": "ordered by mistake"}


def kettle_to_glass(llm: ScriptedLLM, order_id: str, item: str, method: str, verified: bool = True,
                    answer: bool = False) -> None:
    """Script the model reading ``order_id`` and proposing its kettle line ``item`` changed to the glass one (and,
    ``verified``, the verifier passing it; ``answer``: the message answers the agent's question)."""
    if answer:
        answering(llm)
    else:
        to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id=order_id))
    llm.enqueue("executor", call("modify_pending_order_items", order_id=order_id, item_ids=[item],
                                 new_item_ids=["k-glass-1l"], payment_method_id=method))
    if verified:
        llm.enqueue("verifier", verdict(9))


def test_a_line_two_orders_hold_is_asked_about_and_the_answer_completes_the_change(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    # #T0000006 is pending and holds a kettle too; the question which is the agent's own: no verifier call
    kettle_to_glass(llm, "#T0000001", "k-steel-1l", "gift_card_mia", verified=False)
    asked = agent.handle(MIA, "Change my kettle to the glass one, pay any difference with my gift card",
                         turn_key="w:1", conversation_id="w")
    assert asked.outcome == "refused_missing_args" and "Which one do you mean?" in asked.reply
    # the other order was read first, so that each is described
    assert ("the Kettle of #T0000001 (material: steel, capacity: 1L) or the Kettle of #T0000006 (material: enamel, "
            "capacity: 1L)") in asked.reply
    assert asked.args["order_id"] is None and asked.args["new_item_ids"] == ["k-glass-1l"]
    assert loader.export(engine) == before
    kettle_to_glass(llm, "#T0000006", "k-red-1l", "gift_card_mia", answer=True)
    history = [asked.to_record("Change my kettle to the glass one, pay any difference with my gift card")]
    done = agent.handle(MIA, "The red one, in #T0000006", history=history, turn_key="w:2", conversation_id="w")
    assert done.outcome == "pending_confirmation" and done.args["order_id"] == "#T0000006"
    assert done.args["item_ids"] == ["k-red-1l"] and "Kettle (material: enamel -> glass, $38.99 -> $45.50)" in done.reply
    # the answer completes the request it answers, which stays the turn's request (the model and the checks see both)
    assert done.trace["request"] == "Change my kettle to the glass one, pay any difference with my gift card The red " \
        "one, in #T0000006" and "Change my kettle to the glass one" in prompt_text(llm, "executor", 2)
    assert loader.export(engine) == before and llm.pending() == {}


@pytest.mark.parametrize("reason", [None, "no longer needed"])
def test_a_cancel_of_a_delivered_order_asks_for_no_reason_and_is_redone_told_why(shop, reason):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000003", reason=reason))
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003",
                                 item_ids=["k-glass-1l", "s-silk-red"], payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Please cancel or return everything in #T0000003, I don't need any of it",
                          turn_key="d:1", conversation_id="d")
    assert "#T0000003 is delivered; this can only be done while it is pending" in prompt_text(llm, "executor", 2)
    assert result.outcome == "pending_confirmation" and result.operation == "return_delivered_order_items"
    assert [role for role, _, _ in llm.calls].count("verifier") == 1  # the refused cancel cost no verifier call
    assert loader.export(engine) == before and llm.pending() == {}


def test_a_cancel_of_a_delivered_order_is_redone_unread_where_the_request_names_a_return_too(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000003", reason="no longer needed"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))  # the order's items are read first
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003",
                                 item_ids=["k-glass-1l", "s-silk-red"], payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "I'd like to cancel or return whatever came in #T0000003, none of it fits",
                          turn_key="u:1", conversation_id="u")
    # no order was read: the state the profile shows refused the cancel, and the return the request names is redone
    assert "#T0000003 is delivered; this can only be done while it is pending" in prompt_text(llm, "executor", 1)
    # the redo proposes the return the request named: no answer (the 1.5B wrote the refusal back: train task 14)
    assert all("cancel_pending_order" not in _offered(llm, n) and "AnswerDirectly" not in _offered(llm, n)
               and "exchange_delivered_order_items" not in _offered(llm, n) for n in (1, 2))
    assert "return_delivered_order_items" in _offered(llm, 2)
    assert result.outcome == "pending_confirmation" and result.operation == "return_delivered_order_items"
    assert loader.export(engine) == before and llm.pending() == {}


def test_a_cancel_alone_of_a_delivered_order_unread_is_refused_with_the_reason(shop):
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000003", reason="no longer needed"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Cancel #T0000003 please, I changed my mind", turn_key="v:1", conversation_id="v")
    assert "#T0000003 is delivered; this can only be done while it is pending" in result.reply
    assert [role for role, _, _ in llm.calls].count("executor") == 1 and llm.pending() == {}


@pytest.mark.parametrize("text, item", [
    ("Please cancel the kettle I received in #T0000003, I don't want it anymore", "k-glass-1l"),
    ("The scarf from #T0000003 arrived yesterday but cancel it, it's the wrong one", "s-silk-red"),
    ("#T0000003 的围巾我收到了，请取消", "s-silk-red")])
def test_a_cancel_of_what_the_customer_says_they_received_is_redone_as_its_return(shop, text, item):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000003", reason="no longer needed"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=[item],
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, text, turn_key="rc:1", conversation_id="rc")
    assert "#T0000003 is delivered; this can only be done while it is pending" in prompt_text(llm, "executor", 1)
    assert "cancel_pending_order" not in _offered(llm, 2) and "return_delivered_order_items" in _offered(llm, 2)
    # described to the customer and waiting for their yes: nothing written
    assert result.outcome == "pending_confirmation" and result.operation == "return_delivered_order_items"
    assert loader.export(engine) == before and llm.pending() == {}


def test_each_write_of_a_record_in_a_state_it_does_not_take_says_its_own_record(shop):
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", plan(*(("cancel_pending_order", {"order_id": o, "reason": None})
                                   for o in ("#T0000003", "#T0000004"))))
    llm.enqueue("verifier", verdict(9))
    before = loader.export(engine)
    result = agent.handle(MIA, "Please cancel #T0000003 and #T0000004", turn_key="e:1", conversation_id="e")
    # no look-ups to read again: told as the platform's refusal would be, and no reason asked for
    assert "#T0000003 is delivered; this can only be done while it is pending" in result.reply
    assert "#T0000004 is processed; this can only be done while it is pending" in result.reply
    assert loader.export(engine) == before and llm.pending() == {}


def test_a_write_of_a_record_in_a_state_it_does_not_take_beside_others_is_left_out_and_told(shop):
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", plan(*(("cancel_pending_order", {"order_id": o, "reason": "no longer needed"})
                                   for o in ("#T0000001", "#T0000002", "#T0000003"))))
    llm.enqueue("verifier", verdict(9))
    before = loader.export(engine)
    # "all my orders": with "pending" said, only the pending ones are offered (``states.in_named_states``)
    result = agent.handle(MIA, "Cancel all my orders, I no longer need them", turn_key="o:1", conversation_id="o")
    # the delivered order's cancel is left out, the customer told why first; the pending orders' wait for the yes
    assert result.outcome == "pending_confirmation"
    cancelled = [s["args"]["order_id"] for s in result.steps]
    assert "#T0000003" not in cancelled and {"#T0000001", "#T0000002"} <= set(cancelled)
    told, rest = result.reply.split("\n\n", 1)
    assert told.startswith("Not done (cancel your order") and "#T0000003 is delivered" in told
    assert "#T0000003" not in rest and "Shall I go ahead?" in rest
    assert loader.export(engine) == before and llm.pending() == {}


def test_a_cancel_asked_for_one_item_of_an_order_tells_the_customer_and_writes_nothing(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    propose_cancel(llm, "#T0000001", "no longer needed", verified=False)
    result = agent.handle(MIA, "Cancel just the kettle in my pending order, I no longer need it", turn_key="h:1",
                          conversation_id="h")
    assert result.reply == ("I couldn't do that: cancel your order applies to the whole order, not to single items: "
                            "#T0000001 also holds the Scarf, so it cannot be done for the Kettle alone.")
    assert not [s for s in result.trace["steps"] if s.get("role") == "redo"]  # told as it is: no redo, no verifier
    assert loader.export(engine) == before and llm.pending() == {}


def test_a_line_the_customer_described_in_an_order_not_read_is_read_and_taken(sqlite_url):
    document = shop_document()
    kettles = document["products"]["p-kettle"]["variants"]
    kettles["k-glass-2l"] = {"item_id": "k-glass-2l", "options": {"material": "glass", "capacity": "2L"},
                             "available": True, "price": 62.00}
    document["orders"]["#T0000002"]["items"].append({"name": "Kettle", "product_id": "p-kettle", "price": 60.00,
                                                     "item_id": "k-steel-2l", "options": {"material": "steel",
                                                                                          "capacity": "2L"}})
    agent, engine, llm = shop_of(sqlite_url, document)
    before = loader.export(engine)
    to_system(llm)  # the model reads the first pending order holding a kettle (a 1L one) and changes that kettle
    llm.enqueue("executor", call("get_order_details", order_id="#T0000001"))
    llm.enqueue("executor", call("get_product_details", product_id="p-kettle"))
    llm.enqueue("executor", call("modify_pending_order_items", order_id="#T0000001", item_ids=["k-steel-1l"],
                                 new_item_ids=["k-glass-2l"], payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Change my pending 2L kettle to a glass one, same capacity, gift card for any "
                          "difference", turn_key="m:1", conversation_id="m")
    # the other pending order holding a kettle was read: its 2L kettle is the one described ("2L", which the new one
    # has too, but the capacity stays)
    assert result.outcome == "pending_confirmation" and result.operation == "modify_pending_order_items"
    assert result.args["order_id"] == "#T0000002" and result.args["item_ids"] == ["k-steel-2l"]
    assert result.args["new_item_ids"] == ["k-glass-2l"]
    assert loader.export(engine) == before and llm.pending() == {}
    engine.dispose()


@pytest.mark.parametrize("message", [
    "For order #T0000001, change the address to be the same as order #T0000002; the default one stays.",
    "Please ship #T0000001 to the same address as #T0000002, not to my default one",
])
def test_an_orders_address_asked_for_is_not_the_default_address_and_takes_the_address_named(sqlite_url, message):
    document = shop_document()
    harbor = {"address1": "5 Harbor St", "address2": "Apt 2", "city": "Portside", "country": "USA", "state": "ZZ",
              "zip": "33333"}
    document["orders"]["#T0000002"]["address"] = harbor
    agent, engine, llm = shop_of(sqlite_url, document)
    before = loader.export(engine)
    to_system(llm)  # the model reads the order named, then proposes the customer's default address change, to the
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))  # default address itself
    llm.enqueue("executor", call("modify_user_address", address1="7 Lark Street", address2="Unit 2", city="Testville",
                                 state="ZZ", country="USA", zip="11111"))
    to_system(llm, fresh=False)  # then the order's, with the default address copied again
    llm.enqueue("executor", call("modify_pending_order_address", order_id="#T0000001", address1="7 Lark Street",
                                 address2="Unit 2", city="Testville", state="ZZ", country="USA", zip="11111"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, message, turn_key="h:1", conversation_id="h")
    assert "you named #T0000001, and this does not change it" in prompt_text(llm, "executor", 2)
    assert "modify_pending_order_address" in _offered(llm, 2) and "modify_user_address" not in _offered(llm, 2)
    assert "cancel_pending_order" not in _offered(llm, 2)  # the redo is offered that write alone
    assert result.outcome == "pending_confirmation" and result.operation == "modify_pending_order_address"
    assert result.args == {"order_id": "#T0000001", **harbor}  # order #T0000002's, not the one copied
    assert loader.export(engine) == before and llm.pending() == {}
    engine.dispose()


def test_a_default_address_change_asked_for_as_the_customers_own_stays_with_an_order_typed():
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.states import other_record
    home = OPERATIONS["modify_user_address"]
    address = {"address1": "5 Harbor St", "address2": "", "city": "Portside", "country": "USA", "state": "ZZ",
               "zip": "33333"}
    profile = {"orders": ["#T0000001", "#T0000002"], "statuses": [{"order_id": "#T0000001", "status": "pending"}]}
    refused = other_record(home, address, [profile], OPERATIONS.values(), "For #T0000001, change the address to it")
    assert refused.data == {"instead": "modify_pending_order_address"}
    for request in ["Change my default address to the one on order #T0000002",  # the order whose address to take
                    "Make it my address and ship #T0000001 there",  # the customer's own too
                    "Change the address to 5 Harbor St, Portside"]:  # no order typed
        assert other_record(home, address, [profile], OPERATIONS.values(), request) is None, request
    assert other_record(OPERATIONS["modify_pending_order_address"], {**address, "order_id": "#T0000001"}, [profile],
                        OPERATIONS.values(), "For #T0000001, change the address to it") is None  # takes the order


def test_a_fallback_asking_for_a_value_is_completed_next_turn_not_the_refused_swap(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    message = "Change the kettle of #T0000001 to a glass one, same capacity, if it's under $30; if not, cancel it"
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000001"))
    llm.enqueue("executor", call("get_product_details", product_id="p-kettle"))
    llm.enqueue("executor", call("modify_pending_order_items", order_id="#T0000001", item_ids=["k-steel-1l"],
                                 new_item_ids=["k-glass-1l"], payment_method_id="credit_card_mia"))
    to_system(llm, fresh=False)  # the fallback's cancel, with no reason said: asked for
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000001", reason=None))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, message, turn_key="fb:1", conversation_id="fb")
    assert asked.outcome == "refused_missing_args" and asked.operation == "cancel_pending_order"
    answering(llm)  # the model proposes the refused swap again, then the cancel with the reason given
    llm.enqueue("executor", call("modify_pending_order_items", order_id="#T0000001", item_ids=["k-steel-1l"],
                                 new_item_ids=["k-glass-1l"], payment_method_id="credit_card_mia"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000001", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "I ordered it by mistake", history=[asked.to_record(message)], turn_key="fb:2",
                          conversation_id="fb")
    for n in (-2, -1):  # the fallback with the answer, not the swap asked before, nor the fallback alone
        request = prompt_text(llm, "executor", n).split("Message: ")[-1]
        assert request.startswith("Cancel it: the Kettle of #T0000001 I ordered it by mistake"), n
    assert "You asked for one" not in result.reply  # why the fallback was taken was said in the turn before
    assert result.outcome == "pending_confirmation" and result.operation == "cancel_pending_order"
    assert loader.export(engine) == before and llm.pending() == {}


def test_a_question_whose_every_answer_invents_a_number_is_answered_from_the_fields_it_names(sqlite_url):
    from chops.pipeline.context import Step
    from chops.pipeline.fields import fields_asked
    engine, api = load_shop(sqlite_url)
    llm = ScriptedLLM()
    settings = get_settings().model_copy(update={"max_iterations": 1})
    agent = Agent(api, llm, settings, FakeIndex(), approvals=Approvals(), pending=PendingChanges(engine, 600))
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Your order's total is $99.99."}]})
    result = agent.handle(MIA, "What's the total of order #T0000002 now?", turn_key="t:1", conversation_id="t")
    assert "99.99" not in result.reply
    assert result.reply.startswith("What I found in your records: #T0000002: total: 120.0")
    assert llm.pending() == {}
    engine.dispose()
    read = Step(operation="get_order_details", proposed_args={}, args={"order_id": "#T1"}, result=api.call(
        "get_order_details", MIA, {"order_id": "#T0000002"}))
    assert fields_asked("what's its status and total?", [read]) == "#T1: status: pending; total: 120.0"
    assert fields_asked("how much was it?", [read]) is None  # no field named by its key: the apology, as before


def test_an_orders_address_change_is_not_offered_where_the_customers_own_address_changes():
    from apis.retail.registry import OPERATIONS
    ship = OPERATIONS["modify_pending_order_address"]
    for request in ["I moved. Please update the address on my account to 12 Oak Row, Apt 4, Lakeside, ZZ 33333",
                    "Change my default address to 5 Harbor St, Portside", "Set my account address to 9 Mill Lane"]:
        assert not ship.asked_in([request], request), request
        assert OPERATIONS["modify_user_address"].asked_in([request], request), request  # the change they ask for
    for request in ["Please deliver my pending order to the home address on my account",  # where the order goes
                    "Ship #T0000001 to my default address", "Change the address of my pending order to 9 Mill Lane"]:
        assert ship.asked_in([request], request), request


def test_a_write_of_another_kind_is_refused_as_such_before_its_records_state(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    # "payment" names the return's refund method, not a payment change, which the delivered order could not take anyway
    llm.enqueue("executor", call("modify_pending_order_payment", order_id="#T0000003", payment_method_id="paypal_mia"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Please return the kettle from #T0000003 to the original payment method",
                          turn_key="p:1", conversation_id="p")
    redo = prompt_text(llm, "executor", 2)
    assert "you asked to return" in redo and "this can only be done while it is pending" not in redo
    assert result.outcome == "pending_confirmation" and result.operation == "return_delivered_order_items"
    assert loader.export(engine) == before and llm.pending() == {}


def test_a_whole_order_write_of_a_record_in_another_state_is_redone_as_the_kind_asked_not_refused_as_partial(shop):
    agent, engine, llm = shop
    before = loader.export(engine)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    # a payment change (of a whole order, which is delivered) proposed for one item's return
    llm.enqueue("executor", call("modify_pending_order_payment", order_id="#T0000003",
                                 payment_method_id="credit_card_mia"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["s-silk-red"],
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    # the order not typed: its payment change, named by its items, would be refused as partial (the kettle too)
    result = agent.handle(MIA, "Hold on. I also want to return the silk scarf I got to my card.", turn_key="w:1",
                          conversation_id="w")
    assert "#T0000003 is delivered" in prompt_text(llm, "executor", 2)
    assert result.outcome == "pending_confirmation" and result.operation == "return_delivered_order_items"
    assert loader.export(engine) == before and llm.pending() == {}


def test_another_value_given_for_a_refused_one_is_taken_though_the_request_names_the_refused_one_better(shop):
    """"Pay #T0000002 with my gift card" (it already is), then "OK, PayPal then.": the request it completes names the
    gift card by two words, PayPal by one, and PayPal is still the method chosen, not dropped and asked for."""
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("modify_pending_order_payment", order_id="#T0000002", payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))
    first = agent.handle(MIA, "Pay #T0000002 with my gift card", turn_key="p:1", conversation_id="p")
    assert first.outcome == "refused_invalid_arg" and "already paid with gift_card_mia" in first.reply
    answering(llm)  # past the gate, it keeps the route of the request it completes
    llm.enqueue("executor", call("modify_pending_order_payment", order_id="#T0000002", payment_method_id="paypal_mia"))
    llm.enqueue("verifier", verdict(9))
    then = agent.handle(MIA, "OK, PayPal then.", history=[first.to_record("Pay #T0000002 with my gift card")],
                        turn_key="p:2", conversation_id="p")
    assert then.outcome == "pending_confirmation" and then.args["payment_method_id"] == "paypal_mia"
    assert then.trace["request"] == "Pay #T0000002 with my gift card OK, PayPal then." and llm.pending() == {}
