"""A request of several refused (``chops.pipeline.agenda.asking_to_go_on``): the rest of the agenda waits, the reply
asks whether to go on, and the customer's answer, read by the model, takes up the next request or is handled first with
the rest after it."""

from __future__ import annotations

import pytest

from chops.pipeline.agenda import AGENDA, GO_ON
from tests.unit.pipeline_support import call, prompt_text, to_system, verdict
from tests.unit.retail_support import MIA, order
from tests.unit.test_agenda import SHIP, shop  # noqa: F401 (the fixture)
from tests.unit.test_lookup_confirm import YES

LET_GO, INSTEAD = {"answer": "go_on"}, {"answer": "instead"}

REFUSED = "Cancel order #T0000004, I ordered it by mistake."  # processed: the shop cannot cancel it any more
BOTH = "Hi, please cancel order #T0000004 since I ordered it by mistake, and ship order #T0000001 to my home address."


def refuse_the_cancel(llm):
    """The cancel of the processed order proposed, refused, redone once as an answer, verified: the customer is told."""
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000004"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000004", reason="ordered by mistake"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly",
                                        "answer": "Order #T0000004 is processed, so it cannot be cancelled."}]})
    llm.enqueue("verifier", verdict(9))


def refused_first(agent, llm):
    """The first turn: the split, the cancel of the processed order refused, nothing more."""
    llm.enqueue("executor", {"requests": [REFUSED, SHIP]})
    refuse_the_cancel(llm)
    return agent.handle(MIA, BOTH, turn_key="r:1", conversation_id="r")


def ship_next(llm):
    """The address change of #T0000001, proposed from its look-up."""
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000001"))
    llm.enqueue("executor", call("modify_pending_order_address", order_id="#T0000001", address1="7 Lark Street",
                                 address2=None, city=None, state=None, country=None, zip=None))
    llm.enqueue("verifier", verdict(9))


def test_a_refused_request_stops_the_agenda_and_asks_whether_to_go_on(shop):
    agent, engine, llm = shop
    res = refused_first(agent, llm)
    assert res.outcome == "refused_precondition" and not res.committed and not res.pending
    assert res.trace[AGENDA] == [SHIP] and res.trace[GO_ON] == SHIP
    # The next request was not taken up in the same turn: the customer may want something in the refused one's place.
    assert llm.pending() == {} and res.trace.get("requests") is None
    assert res.reply.endswith(f"Shall I go on with your next request (\u201c{SHIP}\u201d), or is there something you "
                              "would like in place of this one?")
    assert "Is there anything else" not in res.reply
    assert order(engine, "#T0000004")["status"] == "processed"


@pytest.mark.parametrize("answer", ["Yes, please go on.", "OK, forget that one then.", "好的，继续吧。"])
def test_going_on_takes_up_the_next_request(shop, answer):
    agent, engine, llm = shop
    history = [refused_first(agent, llm).to_record(BOTH)]
    llm.enqueue("classifier", LET_GO)
    ship_next(llm)
    before = sum(role == "classifier" for role, _, _ in llm.calls)
    res = agent.handle(MIA, answer, history=history, turn_key="r:2", conversation_id="r")
    asked = prompt_text(llm, "classifier", before)  # the model is shown the refused request, the next one, the answer
    assert f"Refused: {REFUSED}" in asked and f"Next: {SHIP}" in asked and f"reply: {answer}" in asked
    assert res.outcome == "pending_confirmation" and res.trace["request"] == SHIP and not res.trace.get(AGENDA)
    assert res.trace["message"] == BOTH  # the request's own message is still the one it was split off
    assert llm.pending() == {} and order(engine, "#T0000001")["address"]["address1"] == "1 Test Way"


def test_a_reply_of_no_request_is_answered_and_the_next_request_still_waits_for_its_own_yes(shop):
    """No answer drops the rest: read as a no, "then leave that order as it is" lost it; the next change is proposed
    and the customer can still decline it."""
    agent, engine, llm = shop
    history = [refused_first(agent, llm).to_record(BOTH)]
    llm.enqueue("classifier", INSTEAD)
    to_system(llm)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly",
                                        "answer": "Then order #T0000004 stays as it is."}]})
    llm.enqueue("verifier", verdict(9))
    ship_next(llm)
    res = agent.handle(MIA, "Then leave that order as it is.", history=history, turn_key="r:2", conversation_id="r")
    assert res.outcome == "pending_confirmation" and res.trace["request"] == SHIP and llm.pending() == {}
    assert order(engine, "#T0000001")["address"]["address1"] == "1 Test Way"


@pytest.mark.parametrize("answer", ["No, that's all, thanks.", "Nope, I'm good. Bye!"])
def test_a_thanks_or_goodbye_ends_the_agenda(shop, answer):
    """Told "no, that's all", the agent proposed the next change all the same."""
    agent, engine, llm = shop
    history = [refused_first(agent, llm).to_record(BOTH)]
    llm.enqueue("classifier", INSTEAD)
    llm.enqueue("classifier", {"route": "small_talk"}).enqueue("classifier", {"route": "thanks_or_goodbye"})
    res = agent.handle(MIA, answer, history=history, turn_key="r:2", conversation_id="r")
    assert res.route == "thanks" and not res.pending and llm.pending() == {}
    assert res.trace.get("requests") is None and SHIP not in res.reply
    assert order(engine, "#T0000001")["address"]["address1"] == "1 Test Way"


@pytest.mark.parametrize("instead", ["Then cancel order #T0000002 instead, please.",
                                     "那就取消订单 #T0000002 吧。"])
def test_something_in_the_refused_ones_place_is_done_first_and_the_rest_after_it(shop, instead):
    agent, engine, llm = shop
    history = [refused_first(agent, llm).to_record(BOTH)]
    llm.enqueue("classifier", INSTEAD)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, instead, history=history, turn_key="r:2", conversation_id="r")
    assert asked.outcome == "pending_confirmation" and asked.trace[AGENDA] == [SHIP]
    history.append(asked.to_record(instead))
    llm.enqueue("classifier", YES)
    ship_next(llm)  # the yes commits the cancel and takes up the address change, which waits for its own yes
    both = agent.handle(MIA, "yes", history=history, turn_key="r:3", conversation_id="r")
    assert order(engine, "#T0000002")["status"] == "cancelled" and both.outcome == "pending_confirmation"
    assert both.trace["request"] == SHIP and llm.pending() == {}


def test_a_request_the_answer_says_again_is_not_on_the_agenda_twice(shop):
    agent, engine, llm = shop
    history = [refused_first(agent, llm).to_record(BOTH)]
    again = "Cancel order #T0000002 instead, and ship order #T0000001 to my home address like I said before."
    llm.enqueue("classifier", INSTEAD)
    llm.enqueue("executor", {"requests": ["Cancel order #T0000002 instead.", "Ship order #T0000001 to my home "
                                          "address like I said before."]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, again, history=history, turn_key="r:2", conversation_id="r")
    assert asked.trace[AGENDA] == ["Ship order #T0000001 to my home address like I said before."]


def test_the_question_is_asked_in_the_customers_language(shop):
    agent, engine, llm = shop
    text = "你好，请取消订单 #T0000004，我买错了，另外请把订单 #T0000001 寄到我家的地址。"
    first, second = "取消订单 #T0000004，我买错了。", "把订单 #T0000001 寄到我家的地址。"
    llm.enqueue("executor", {"requests": [first, second]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000004"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000004", reason="ordered by mistake"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "订单已处理，无法取消。"}]})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, text, turn_key="z:1", conversation_id="z")
    assert res.reply.endswith(f"要我接着处理您的下一个请求（\u201c{second}\u201d）吗？还是您想用别的来代替这一个？")


def test_a_request_refused_after_a_yes_committed_the_one_before_stops_the_agenda_too(shop):
    agent, engine, llm = shop
    cancel = "Cancel order #T0000002, I ordered it by mistake."
    three = f"Hi! {cancel} Then {REFUSED[0].lower()}{REFUSED[1:]} And ship order #T0000001 to my home address."
    llm.enqueue("executor", {"requests": [cancel, REFUSED, SHIP]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, three, turn_key="t:1", conversation_id="t")
    assert asked.outcome == "pending_confirmation" and asked.trace[AGENDA] == [REFUSED, SHIP]
    llm.enqueue("classifier", YES)
    refuse_the_cancel(llm)
    res = agent.handle(MIA, "yes", history=[asked.to_record(three)], turn_key="t:2", conversation_id="t")
    assert res.committed and order(engine, "#T0000002")["status"] == "cancelled"
    assert res.outcome == "refused_precondition" and res.trace[AGENDA] == [SHIP] and res.trace[GO_ON] == SHIP
    assert res.reply.startswith("Done:") and res.reply.endswith("in place of this one?") and llm.pending() == {}
    assert "Is there anything else" not in res.reply


def test_an_answer_that_only_writes_back_a_checks_refusal_is_not_sent(shop):
    """Split off a question as "Trade the kettle …", the swap was refused (a question asks for no change), and the 1.5B
    answered the customer with the refusal's own words at every attempt; the verifier scored each 1 and the chooser
    sent it (own7). The customer hears the apology instead."""
    agent, engine, llm = shop
    text = ("Hello there. The kettle I got from order #T0000003 is too plain for me. Can I trade it in for another "
            "one, paid with my credit card?")
    llm.enqueue("executor", {"requests": ["Trade the kettle from order #T0000003 for another one, paid with my credit "
                                          "card."]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("get_product_details", product_id="p-kettle"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=["k-steel-1l"], payment_method_id="credit_card_mia"))
    for _ in range(4):  # the redo and the attempts after it (some of their calls are never made)
        to_system(llm, fresh=False)
        llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "You asked to know something, "
                                            "not for other items in place of these."}]})
        llm.enqueue("verifier", verdict(1, "does nothing"))
    llm.enqueue("chooser", {"attempt": 1})  # (asked only where an attempt is left to choose)
    res = agent.handle(MIA, text, turn_key="q:1", conversation_id="q")
    assert [s["outcome"] for s in res.trace["steps"] if s["role"] == "redo"] == ["refused_invalid_arg"]
    assert "in place of these" not in res.reply and res.reply.startswith("Sorry") and not res.pending
    assert order(engine, "#T0000003")["status"] == "delivered"
