"""Several requests in one message (``chops.pipeline.agenda``), through the agent on the made-up shop: the message is
split, the first request is described and waits for its yes, the yes commits it and takes up the next in the same
turn; a "no" drops the rest; a question answered goes on to the next request at once."""

from __future__ import annotations

import pytest

from apis.retail.pack import RetailPack
from chops.llm import ScriptedLLM
from chops.pending import PendingChanges
from chops.pipeline import Agent
from chops.pipeline.agenda import AGENDA
from chops.pipeline.splitting import may_hold_several
from chops.settings import get_settings
from tests.unit.pipeline_support import FakeIndex, call, prompt_text, small_talk, to_system, verdict
from tests.unit.retail_support import MIA, load_shop, order
from tests.unit.test_lookup_confirm import NO, YES, Approvals

CANCEL = "Cancel order #T0000002, I ordered it by mistake."
SHIP = "Ship order #T0000001 to my home address."
TWO = "Hi, please cancel order #T0000002 since I ordered it by mistake, and ship order #T0000001 to my home address."


@pytest.fixture
def shop(sqlite_url):
    engine, api = load_shop(sqlite_url)
    llm = ScriptedLLM()
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals(), pending=PendingChanges(engine, 600),
                  prompts=RetailPack.prompts, closing_question=True, split_requests=True)
    yield agent, engine, llm
    engine.dispose()


def test_only_a_long_joined_message_is_split():
    assert may_hold_several(TWO)
    assert may_hold_several("我想取消订单 #T0000002，另外请把订单 #T0000001 寄到我家的地址")
    assert not may_hold_several("cancel #T0000002 and #T0000003")  # short: one request, whatever it joins
    assert not may_hold_several("Please cancel my order #T0000002 because I ordered it by mistake yesterday evening")


def cancel_first(agent, llm, text=TWO):
    llm.enqueue("executor", {"requests": [CANCEL, SHIP]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))  # look up, then act
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    return agent.handle(MIA, text, turn_key="g:1", conversation_id="g")


def test_each_request_is_confirmed_in_turn_and_the_yes_takes_up_the_next(shop):
    agent, engine, llm = shop
    asked = cancel_first(agent, llm)
    assert asked.outcome == "pending_confirmation" and asked.trace[AGENDA] == [SHIP]
    assert "Message: " + CANCEL in prompt_text(llm, "executor")  # the executor works on the first request alone
    assert "Anything else" not in asked.reply and "Ship" not in asked.reply
    history = [asked.to_record(TWO)]
    # The yes commits the cancel, then the address change is proposed in the same turn (the model copies the street
    # only: the profile's address completes it) and waits for its own yes.
    llm.enqueue("classifier", YES)
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000001"))  # the commit changed what was read
    llm.enqueue("executor", call("modify_pending_order_address", order_id="#T0000001", address1="7 Lark Street",
                                 address2=None, city=None, state=None, country=None, zip=None))
    llm.enqueue("verifier", verdict(9))
    both = agent.handle(MIA, "yes", history=history, turn_key="g:2", conversation_id="g")
    assert order(engine, "#T0000002")["status"] == "cancelled"
    assert both.committed and both.trace["confirmed"] and both.outcome == "pending_confirmation"
    assert both.reply.index("cancelled") < both.reply.index("7 Lark Street") and "Shall I" in both.reply
    assert "Is there anything else" not in both.reply  # a question is open
    assert [s["operation"] for s in both.steps] == ["cancel_pending_order", "modify_pending_order_address"]
    assert order(engine, "#T0000001")["address"]["address1"] == "1 Test Way"  # the second waits for its yes
    history.append(both.to_record("yes"))
    llm.enqueue("classifier", YES)
    done = agent.handle(MIA, "yes, go ahead", history=history, turn_key="g:3", conversation_id="g")
    assert done.committed and order(engine, "#T0000001")["address"]["address2"] == "Unit 2"
    assert "Is there anything else" in done.reply and not done.trace.get(AGENDA)
    assert llm.pending() == {}


def test_a_no_drops_the_rest_of_the_agenda(shop):
    agent, engine, llm = shop
    asked = cancel_first(agent, llm)
    llm.enqueue("classifier", NO)
    declined = agent.handle(MIA, "no, don't", history=[asked.to_record(TWO)], turn_key="g:2", conversation_id="g")
    assert declined.outcome == "declined" and not declined.trace.get(AGENDA) and llm.pending() == {}
    assert order(engine, "#T0000002")["status"] == "pending"


def test_an_answered_question_goes_on_to_the_next_request_at_once(shop):
    agent, engine, llm = shop
    question = "What is the status of order #T0000004?"
    llm.enqueue("executor", {"requests": [question, CANCEL]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000004"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Order #T0000004 is processed."}]})
    llm.enqueue("verifier", verdict(9))
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))  # look up, then act
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, "Hello! What's the status of order #T0000004? And cancel #T0000002, I ordered it by "
                       "mistake.", turn_key="q:1", conversation_id="q")
    assert res.reply.startswith("Order #T0000004 is processed.") and res.outcome == "pending_confirmation"
    assert not res.committed and res.trace["requests"] == [question, CANCEL] and llm.pending() == {}
    assert order(engine, "#T0000002")["status"] == "pending"


def test_a_message_of_one_request_is_handled_as_it_is(shop):
    agent, engine, llm = shop
    llm.enqueue("executor", {"requests": ["Cancel order #T0000002."]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="no longer needed"))
    llm.enqueue("verifier", verdict(9))
    text = "Hi there, I would like to cancel order #T0000002 and I no longer need it at all, thanks."
    res = agent.handle(MIA, text, turn_key="o:1", conversation_id="o")
    assert res.outcome == "pending_confirmation" and not res.trace.get(AGENDA)
    assert "Message: " + text in prompt_text(llm, "executor")


def test_a_split_that_is_no_list_of_requests_leaves_the_message_whole(shop):
    agent, engine, llm = shop
    llm.enqueue("executor", '{"requests":["Cancel order #T0000002, I ordered it by')  # cut off, twice
    llm.enqueue("executor", '{"requests":["Cancel')
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))  # look up, then act
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, TWO, turn_key="c:1", conversation_id="c")
    assert res.outcome == "pending_confirmation" and not res.trace.get(AGENDA)
    assert "Message: " + TWO in prompt_text(llm, "executor", -1)


def test_four_questions_and_a_change_in_one_message_keep_the_change_on_the_agenda():
    from chops.pipeline.splitting import split
    from chops.pipeline.trace import Trace

    asked = ["Where did order #T0000003 go?", "What is its tracking number?", "Has it arrived?",
             "What colour is my scarf?", "Change my default address to 1 Test Way."]
    llm = ScriptedLLM().enqueue("executor", {"requests": asked})
    # The schema allowed four: the fifth, the one change asked for, was never made (train task 43).
    assert split(llm, " ".join(asked), Trace()) == asked


@pytest.mark.parametrize("second", [
    "Refund the kettle to a new gift card and upgrade the chair.",  # nothing in the message asks for that
    "Ship order #T0000001 to my cheaper home address.",  # its words but one, and that one compares
    "Never ship order #T0000001 to my home address.",  # its words but one, and that one turns it around
])
def test_a_split_with_a_request_the_message_does_not_hold_leaves_it_whole(shop, second):
    agent, engine, llm = shop
    llm.enqueue("executor", {"requests": [CANCEL, second]})  # one sentence: its own sentences cannot tell them apart
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, TWO, turn_key="i:1", conversation_id="i")
    assert res.outcome == "pending_confirmation" and not res.trace.get(AGENDA)
    assert "Message: " + TWO in prompt_text(llm, "executor", -1)


@pytest.mark.parametrize("second", ["Cancel order #T0000002.", "Never cancel order #T0000002."])
def test_a_split_with_words_the_message_does_not_have_gives_the_messages_own_sentences(second):
    from chops.pipeline.splitting import split
    from chops.pipeline.trace import Trace

    text = "Hello! My lamp arrived cracked, I'd like a replacement, the exact same lamp. And cancel order #T0000002."
    llm = ScriptedLLM().enqueue("executor", {"requests": ["Replace the cracked lamp with an identical one.", second]})
    trace = Trace()
    assert split(llm, text, trace) == ["Hello! My lamp arrived cracked, I'd like a replacement, the exact same lamp.",
                                       "And cancel order #T0000002."]
    assert [(s["invented"], len(s["own_sentences"])) for s in trace.steps if "requests" in s] == [(True, 2)]


@pytest.mark.parametrize("parts", [
    ["Replace the lamp with an identical one.", "Refund my scarf."],  # the second shares no word with any sentence
    ["Cancel order #T0000002 right away.", "Replace the cracked lamp with an identical one."],  # out of order
])
def test_an_invented_split_the_sentences_cannot_follow_leaves_the_message_whole(parts):
    from chops.pipeline.splitting import split
    from chops.pipeline.trace import Trace

    text = "Hello! My lamp arrived cracked, I'd like a replacement, the exact same lamp. And cancel order #T0000002."
    assert split(ScriptedLLM().enqueue("executor", {"requests": parts}), text, Trace()) == [text]


@pytest.mark.parametrize("fallback", [
    "If the kettle is out of stock, cancel order #T0000001 instead.",
    "Otherwise ship order #T0000001 to my home address.",
    "I'd prefer the glass one for order #T0000001.",
    "如果不行，就把订单 #T0000001 寄到我家。",
    "Use my gift card to cover any extra charge.",  # how to pay the difference (train task 21)
    "And pay the difference with PayPal, please.",
    "The refund on PayPal, please.",  # the split wrote "I'd prefer the refund on PayPal" as "Refund on PayPal."
    "The money should go back to my gift card.",
    "退款到我的 PayPal。",
    "Leave the other order's address as it is now.",  # what to keep as it is (train task 22)
    "Please don't touch order #T0000001.",
    "保持订单 #T0000001 不变。",
])
def test_a_condition_or_preference_split_off_stays_with_the_request_before_it(shop, fallback):
    agent, _, llm = shop
    llm.enqueue("executor", {"requests": [CANCEL, fallback]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, f"{CANCEL} {fallback}", turn_key="c:1", conversation_id="c")
    split = next(s for s in res.trace["steps"] if s.get("split"))
    assert len(split["requests"]) == 1 and split["requests"][0].startswith("Cancel order #T0000002, I ordered")
    assert fallback[1:] in split["requests"][0] and not res.trace.get(AGENDA)


@pytest.mark.parametrize("second", [
    "Exchange the scarf in #T0000003 for a blue one and pay the difference with PayPal.",
    "If that order is cancelled, also return the kettle from #T0000003.",  # a request of its own, on a condition
    "If it goes through, please cancel #T0000006 too.",
    "Refund the kettle from #T0000003 to my card.",  # a thing to refund: a request of its own
    "Keep the kettle from #T0000003 as it is but exchange the scarf for a blue one.",  # a change beside the keeping
])
def test_a_request_that_pays_a_difference_or_adds_a_change_of_its_own_stays_a_request(second):
    from chops.pipeline.splitting import _with_conditions
    assert _with_conditions([CANCEL, second]) == [CANCEL, second]


@pytest.mark.parametrize("first", [True, False])
def test_a_request_split_off_a_message_is_never_declined_as_off_topic(shop, first):
    agent, _, llm = shop
    question = "Is order #T0000004 still in transit?"
    llm.enqueue("executor", {"requests": [question, CANCEL] if first else [CANCEL, question]})
    history = []
    if not first:  # the cancel first, described; the yes takes up the question
        to_system(llm)
        llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
        llm.enqueue("verifier", verdict(9))
        said = "Cancel order #T0000002 as I ordered it by mistake. And order #T0000004, is it still in transit?"
        history = [agent.handle(MIA, said, turn_key="t:1", conversation_id="t").to_record(said)]
        llm.enqueue("classifier", YES)
    small_talk(llm, "unrelated_to_platform")  # alone, the question looks like it is about nothing of ours
    to_system(llm, fresh=False)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000004"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Order #T0000004 is on its way."}]})
    llm.enqueue("verifier", verdict(9))
    if first:
        to_system(llm)
        llm.enqueue("executor", call("cancel_pending_order", order_id="#T0000002", reason="ordered by mistake"))
        llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, "Order #T0000004, is it still in transit? And cancel order #T0000002 as I ordered it by "
                       "mistake." if first else "yes", history=history, turn_key="t:2", conversation_id="t")
    assert "Order #T0000004 is on its way." in res.reply and "only help with this platform" not in res.reply
    assert llm.pending() == {}


KETTLE_BACK = "Return the kettle from order #T0000003 to my credit card"


def _routed(url: str, tmp_path):
    """(agent, engine, scripted llm, router): the made-up shop, requests split, the test router trained."""
    from chops.router import Router, read_examples
    from tests.unit.test_router import BagOfWords, examples_file

    router = Router.train(read_examples(examples_file(tmp_path)), BagOfWords())
    engine, api = load_shop(url)
    llm = ScriptedLLM()
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals(), pending=PendingChanges(engine, 600),
                  prompts=RetailPack.prompts, split_requests=True, router=router)
    return agent, engine, llm, router


def _return_kettle(llm: ScriptedLLM) -> None:
    """Script the model routing, reading and proposing the kettle's return (``KETTLE_BACK``), the verifier passing it."""
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("return_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))


def test_an_off_topic_part_the_router_is_sure_of_is_declined_and_the_rest_done(sqlite_url, tmp_path):
    """A request split off a message may not be declined as off-topic by the model (above), but may where the router
    is sure: the general-knowledge question is declined, the return is still proposed."""
    agent, engine, llm, router = _routed(sqlite_url, tmp_path)
    off_topic, kettle = "a joke poem please, sunny weather", KETTLE_BACK
    assert router.decide(off_topic).sure and router.decide(off_topic).route == "out_of_scope"
    assert not router.decide(kettle).sure  # the model routes the return
    llm.enqueue("executor", {"requests": [off_topic, kettle]})
    _return_kettle(llm)
    res = agent.handle(MIA, f"{off_topic}. Also: {kettle}", turn_key="o:1", conversation_id="o")
    declined, proposed = res.reply.split("\n\n")
    assert "only help with this platform" in declined and res.outcome == "pending_confirmation"
    assert "Return of 1 item(s) requested for order #T0000003 (Kettle)" in proposed and llm.pending() == {}
    engine.dispose()


KETTLE = "Please exchange the kettle from order #T0000003 for the steel one, on the card I paid with."
SCARF = "The scarf in the same order needs exchanging too: the blue wool one, 100 percent wool."
CHAIR = "And cancel order #T0000002, I no longer need it."


def test_a_later_request_about_another_line_of_the_same_order_joins_the_swap(shop):
    """An order's items change once: the scarf's exchange, a later request of the message, joins the kettle's once
    the order's look-up shows both are its lines (``chops.pipeline.together``); the chair's cancel stays on the
    agenda."""
    agent, engine, llm = shop
    llm.enqueue("executor", {"requests": [KETTLE, SCARF, CHAIR]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003",
                                 item_ids=["k-glass-1l", "s-silk-red"], new_item_ids=["k-steel-1l", "s-wool-blue"],
                                 payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, " ".join([KETTLE, SCARF, CHAIR]), turn_key="j:1", conversation_id="j")
    assert res.outcome == "pending_confirmation" and res.trace[AGENDA] == [CHAIR] and llm.pending() == {}
    joined = next(s for s in res.trace["steps"] if s["role"] == "joined")
    assert joined["requests"] == [SCARF] and joined["record"] == {"order_id": "#T0000003"}
    acting = prompt_text(llm, "executor")
    assert f"Message: {KETTLE} {SCARF}" in acting and "s-wool-blue" in acting  # the scarf's variants were read
    assert res.steps[0]["args"]["new_item_ids"] == ["k-steel-1l", "s-wool-blue"]
    # The confirmation says the exchange in the shop's words, both items named, not Python's "['k-glass-1l', …]".
    told = res.reply.split("Exchange of 2 item(s) requested for order #T0000003: ")[1]
    assert told.startswith("Kettle (") and "; Scarf (" in told and "['" not in res.reply
    assert order(engine, "#T0000003")["status"] == "delivered"  # nothing is written before the yes


def test_a_later_request_about_another_order_or_of_another_kind_stays_on_the_agenda(shop):
    agent, engine, llm = shop
    other = "The scarf from order #T0000004 should be red instead."
    ret = "And return the scarf of that order, please."
    llm.enqueue("executor", {"requests": [KETTLE, other, ret]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=["k-steel-1l"], payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, " ".join([KETTLE, other, ret]), turn_key="k:1", conversation_id="k")
    assert res.trace[AGENDA] == [other, ret] and not any(s["role"] == "joined" for s in res.trace["steps"])
    assert f"Message: {KETTLE}\n" in prompt_text(llm, "executor") + "\n"


def test_a_later_request_to_make_a_line_like_one_the_order_read_holds_stays_on_the_agenda(shop):
    """"Change the scarf I just ordered to the same kind as the one I already got": the delivered order read holds the
    scarf to copy, not the one to change (train task 23: joined, neither change was done)."""
    agent, engine, llm = shop
    like = "Change the scarf I just ordered to the same kind as the one I already got."
    llm.enqueue("executor", {"requests": [KETTLE, like]})
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=["k-steel-1l"], payment_method_id="credit_card_mia"))
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, f"{KETTLE} {like}", turn_key="l:1", conversation_id="l")
    assert res.trace[AGENDA] == [like] and not any(s["role"] == "joined" for s in res.trace["steps"])
    assert res.steps[0]["args"]["item_ids"] == ["k-glass-1l"] and llm.pending() == {}


def test_a_swap_added_to_keeps_the_old_pairs_and_the_new_call_wins_a_line_both_change():
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.together import with_dropped

    swap = OPERATIONS["modify_pending_order_items"]
    old = {"order_id": "#W1", "item_ids": ["shoe", "hat"], "new_item_ids": ["shoe-9", "hat-L"], "payment_method_id": "gc"}
    new = {"order_id": "#W1", "item_ids": ["hat", "bag"], "new_item_ids": ["hat-M", "bag-red"],
           "payment_method_id": "card"}
    dropped = [("modify_pending_order_items", old)]
    assert with_dropped(swap, new, dropped, "Wait, I also want the bag in red") == {
        "order_id": "#W1", "item_ids": ["shoe", "hat", "bag"], "new_item_ids": ["shoe-9", "hat-M", "bag-red"],
        "payment_method_id": "card"}
    assert with_dropped(swap, new, dropped, "Make it the bag in red instead") is None  # nothing added
    assert with_dropped(swap, {**new, "order_id": "#W2"}, dropped, "also the bag") is None  # another order
    assert with_dropped(OPERATIONS["exchange_delivered_order_items"], new, dropped, "also the bag") is None


def test_a_request_split_off_a_message_is_asked_for_by_its_own_words_not_the_messages():
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.context import TurnContext
    from chops.pipeline.trace import Trace
    from chops.records import TurnRecord

    whole = "Change my LA order to my NYC address. Also exchange the speaker for the cheapest green one."
    part = "Exchange the speaker for the cheapest green one."
    earlier = TurnRecord(user_text="I moved house last week", reply="Noted.")
    ctx = TurnContext(nickname="u1", text=part, profile=None, history=[earlier, TurnRecord(user_text=whole)],
                      trace=Trace(), message=whole)
    assert ctx.request_texts == [part, "I moved house last week"]  # earlier turns still count
    assert not OPERATIONS["modify_pending_order_address"].asked_in([part], whole)
    alone = TurnContext(nickname="u1", text=whole, profile=None, history=[], trace=Trace())
    assert alone.request_texts == alone.user_texts == [whole]
    # Taken up from the agenda after the customer's yes: the message it was split off is an earlier turn's.
    later = TurnContext(nickname="u1", text=part, profile=None, trace=Trace(), message="Yes, go ahead",
                        history=[earlier, TurnRecord(user_text=whole), TurnRecord(user_text="Yes, go ahead")])
    assert later.request_texts == [part, "I moved house last week"]

    # The answer to the value a split-off request was asked for: that request and the answer, not the whole message.
    asked = "Cancel #W2, I no longer need it."
    answered = TurnContext(nickname="u1", text=f"{asked} Ordered by mistake", profile=None, trace=Trace(),
                           message="Ordered by mistake", asked=asked,
                           history=[TurnRecord(user_text=f"{asked} Also ship #W1 to my new home, 1 Elm St.")])
    assert answered.request_texts == [answered.text]
    assert not OPERATIONS["modify_pending_order_address"].asked_in(answered.request_texts, answered.message)


def test_a_sentence_with_an_id_no_split_request_holds_joins_the_request_nearest_it():
    from chops.pipeline.splitting import _with_lost
    message = ("Hello. For order #T0000001, make the address the same as order #T0000002. Also swap its kettle for "
               "the glass one. Finally, cancel #T0000003.")
    parts = ["Make the address the same as order #T0000002.", "Swap the kettle for the glass one.",
             "Cancel #T0000003."]
    assert _with_lost(parts, message) == [
        "Make the address the same as order #T0000002. For order #T0000001, make the address the same as order "
        "#T0000002.", "Swap the kettle for the glass one.", "Cancel #T0000003."]
    assert _with_lost(["Return the kettle.", "Change my address."],
                      "Return the kettle, please. And change my address. It is 12 Elm St, Testville 11111.") == [
        "Return the kettle.", "Change my address. It is 12 Elm St, Testville 11111."]  # the part before it
    assert _with_lost(parts[1:], "Swap the kettle for the glass one. Cancel #T0000003.") == parts[1:]  # none lost
    assert _with_lost(parts[1:], "I'm mia_77 and new here. Swap the kettle for the glass one. Cancel #T0000003.") \
        == parts[1:]  # a sentence before every request: a preamble



def test_a_request_split_off_after_a_heads_colon_is_opened_by_the_head():
    from chops.pipeline.splitting import _with_topic
    message = "Hi! Return my kettle please. And as for my open order: make its lamp blue, and send it to my office."
    parts = ["Return my kettle.", "Make its lamp blue.", "Send it to my office."]
    assert _with_topic(parts, message) == ["Return my kettle.", "My open order: make its lamp blue.",
                                           "My open order: send it to my office."]
    # A part that names the head's words already, a long head, or a time's colon: as it was.
    assert _with_topic(["Make the open order's lamp blue."], "My open order: make its lamp blue.") == [
        "Make the open order's lamp blue."]
    long_head = "So this is about the order I placed on Monday for my sister: make its lamp blue."
    assert _with_topic(["Make its lamp blue."], long_head) == ["Make its lamp blue."]
    assert _with_topic(["Deliver it before noon."], "Deliver it at 10:30 or before noon.") == [
        "Deliver it before noon."]


def test_a_request_is_said_in_the_clause_of_the_message_sharing_most_words_with_it():
    from chops.pipeline.splitting import clause_of
    message = "Hello! I'd like to cancel the mug and the bowl I received, they came together. Also ship my lamp home."
    assert clause_of("Cancel the mug and the bowl from one order.", message) == (
        "I'd like to cancel the mug and the bowl I received,")
    assert clause_of("Send the lamp to my home.", message) == "Also ship my lamp home."


@pytest.mark.parametrize("message, part, expected", [
    # A sentence naming a thing and nothing asked of it asks for what the request before it did.
    ("Return the mug I received. Also the bowl I got with the plates.", "Exchange the bowl I got with the plates.",
     "Return the bowl I got with the plates."),
    ("Please cancel #T0000001. And the one with the toaster too.", "Change the one with the toaster.",
     "Cancel the one with the toaster."),
    # A sentence saying what the thing should be, of two clauses, or holding the request's verb: as the split wrote it.
    ("Return the mug. And the lamp I ordered should be blue.", "Change the lamp to blue.", "Change the lamp to blue."),
    ("Return the mug. Also the lamp, I'd like it in blue.", "Exchange the lamp for a blue one.",
     "Exchange the lamp for a blue one."),
    ("Return the mug. Also the lamp for a blue one.", "Exchange the lamp for a blue one.",
     "Exchange the lamp for a blue one."),
    ("Return the mug. And my open order: ship it home.", "Change the address of my open order to home.",
     "Change the address of my open order to home."),
    # The verb said in an earlier clause of the sentence the things are listed in (train task 2).
    ("Tell me how many sizes the scarf comes in. Also, I'd like to return the kettle, the sunglasses and the smart "
     "watch I received.", "Return the kettle, the sunglasses and the smart watch I received.",
     "Return the kettle, the sunglasses and the smart watch I received."),
])
def test_a_request_split_off_a_sentence_asking_nothing_of_its_own_takes_the_verb_before_it(message, part, expected):
    from chops.pipeline.splitting import _elliptic
    first = message.split(". ")[0] + "."
    assert _elliptic([first, part], message) == [first, expected]


def test_a_question_lends_no_verb_to_the_request_after_it():
    from chops.pipeline.splitting import _elliptic
    question = "How many sizes does the scarf come in?"
    assert _elliptic([question, "Cancel the mug I ordered."], f"{question} Also the mug I ordered.") == [
        question, "Cancel the mug I ordered."]


@pytest.mark.parametrize("part, expected", [
    # A second change of another kind the pack asks for by its words (an address, a payment), sharing the first's verb.
    ("Change the lamp in my open order to white, and its address to 12 Elm St, Testville 11111.",
     ["Change the lamp in my open order to white.", "Change my open order's address to 12 Elm St, Testville 11111."]),
    ("Make the rug in my pending order the round one and its delivery address my office",
     ["Make the rug in my pending order the round one.", "Make my pending order's delivery address my office"]),
    # One swap of several options, and a refund's destination: one request.
    ("Change the color of the lamp to white and the size to L.", None),
    ("Cancel my pending order, and the refund to my gift card please.", None),
])
def test_a_request_of_two_changes_of_kinds_asked_by_words_is_two(part, expected):
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.splitting import _gapped
    assert _gapped([part], list(OPERATIONS.values())) == (expected or [part])


def test_what_was_said_before_the_last_change_was_made_asks_for_nothing_now():
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.context import TurnContext
    from chops.pipeline.trace import Trace
    from chops.records import TurnRecord

    address = OPERATIONS["modify_pending_order_address"]
    history = [TurnRecord(user_text="Please send my kettle order to my Boston address"),
               TurnRecord(user_text="Yes, do it", committed=True),
               TurnRecord(user_text="Now the blender")]
    ctx = TurnContext(nickname="u1", text="I'd like it in steel instead", profile=None, history=history,
                      trace=Trace())
    assert ctx.request_texts == ["I'd like it in steel instead", "Now the blender"]
    assert not address.asked_in(ctx.request_texts, ctx.text)
    # Before the change was made, the first message still asks for it (the customer was asked which order).
    asking = TurnContext(nickname="u1", text="#W100", profile=None, history=history[:1], trace=Trace())
    assert address.asked_in(asking.request_texts, asking.text)
    # A change sent to staff for approval ends its request as a commit does.
    queued = [TurnRecord(user_text="Send the kettle to my Boston address"), TurnRecord(user_text="ok", queued=True)]
    assert TurnContext(nickname="u1", text="And the blender in steel", profile=None, history=queued,
                       trace=Trace()).request_texts == ["And the blender in steel"]
    # A request pointing back at the finished one is asked for by its words.
    for text in ("the blender too", "Same for order #W200 please", "and the blender as well", "搅拌机也要改"):
        back = TurnContext(nickname="u1", text=text, profile=None, history=history[:2], trace=Trace())
        assert address.asked_in(back.request_texts, back.text), text


def test_another_value_after_a_refused_one_completes_the_refused_request():
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.agenda import plan, replaced_values
    from chops.records import TurnRecord

    asked = "Return the scarf I got, and put the money on my PayPal."
    last = TurnRecord(user_text=asked, operation="return_delivered_order_items", outcome="refused_precondition",
                      args={"order_id": "#T0000003", "item_ids": ["s-silk-red"], "payment_method_id": "paypal_mia"},
                      reply="I couldn't do that: A refund goes to the order's original payment method (credit_card_mia) "
                            "or to one of your gift cards, not to paypal_mia.")
    ops = OPERATIONS.values()
    assert replaced_values(last, "Fine, my credit card then.", ops) == {"payment_method_id": "paypal_mia"}
    assert not replaced_values(last, "Then cancel order #T0000002 instead.", ops)  # a change of its own
    # A refusal naming only the record changed ("#T… is delivered") asks for no other value.
    state = last.model_copy(update={"reply": "I couldn't do that: #T0000003 is delivered; this can only be done "
                                             "while it is pending", "operation": "modify_pending_order_payment"})
    assert not replaced_values(state, "Fine, my credit card then.", ops)
    # The agent's own refusal (done already in this conversation) names no value to replace: its reason stood in it.
    done = TurnRecord(user_text="Cancel the charger order, I no longer need it.", operation="cancel_pending_order",
                      outcome="refused_precondition", args={"order_id": "#T0000002", "reason": "no longer needed"},
                      reply="That was already done earlier in this conversation: Order #T0000002 is cancelled (no "
                            "longer needed).", trace={"steps": [{"role": "verifier", "as_told": True}]})
    assert not replaced_values(done, "Yes, that's everything. Please go ahead.", ops)
    assert replaced_values(done.model_copy(update={"trace": {}}), "Yes, please go ahead.", ops) == {
        "reason": "no longer needed"}  # read as another value where the platform refused it
    trace = type("Trace", (), {"info": {}})()
    ctx = type("Ctx", (), {"text": "Fine, my credit card then.", "trace": trace, "message": None, "asked": None,
                                 "replaced": {}})()
    plan(ctx, [last], None, None, ops)
    assert ctx.text == f"{asked} Fine, my credit card then." and ctx.asked == asked
    assert ctx.replaced == {"payment_method_id": "paypal_mia"}  # the request is not offered the refused card again


def test_a_part_the_router_alone_is_sure_drops_the_request_is_left_to_the_model(sqlite_url, tmp_path):
    """A "never mind" split off a message is taken only from the model: the router was sure a remark about the
    customer's name was one, and the customer heard their request dropped (train task 67)."""
    agent, engine, llm, router = _routed(sqlite_url, tmp_path)
    remark, kettle = "never mind, forget it: Mimi", KETTLE_BACK
    assert router.decide(remark).sure and router.decide(remark).route == "cancel"
    assert not router.decide(kettle).sure
    llm.enqueue("executor", {"requests": [remark, kettle]})
    llm.enqueue("classifier", {"route": "about_the_platform"}).enqueue("classifier", {"route": "own_fact"})
    llm.enqueue("executor", {"answer": "Noted: Mimi."})
    llm.enqueue("verifier", verdict(9))
    _return_kettle(llm)
    res = agent.handle(MIA, f"{remark}. Also: {kettle}", turn_key="m:1", conversation_id="m")
    assert "dropped" not in res.reply and res.outcome == "pending_confirmation" and llm.pending() == {}
    assert "Return of 1 item(s) requested for order #T0000003 (Kettle)" in res.reply
    engine.dispose()


def test_a_change_named_of_what_the_customer_holds_is_not_sent_to_the_guides_by_the_router_alone(sqlite_url, tmp_path):
    """"Can you exchange the tablet for the same item?": the embedding router was sure it asked about the policy (train
    task 30). A write's kind named with a thing the customer's orders hold leaves the route to the model."""
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.classifier import asks_change_of_held

    profile = [{"orders": ["#T1", "#T2"], "statuses": [{"order_id": "#T1", "status": "delivered", "names": ["Kettle"]},
                                                      {"order_id": "#T2", "status": "pending", "names": ["Desk Lamp"]}]}]
    for text in ("Can you exchange the kettle for the same one?", "could the lamps be cancelled?",
                 "I'd like to send back my kettle"):
        assert asks_change_of_held(text, OPERATIONS, profile), text
    for text in ("Can I exchange an item for a different product?", "what warranty does the kettle have?",
                 "can you return the tent?"):
        assert not asks_change_of_held(text, OPERATIONS, profile), text
    agent, engine, llm, router = _routed(sqlite_url, tmp_path)
    question = "how do i return the kettle and upload"
    assert router.decide(question).sure and router.decide(question).route == "guide"
    _return_kettle(llm)
    res = agent.handle(MIA, question, turn_key="k:1", conversation_id="k")
    assert res.outcome == "pending_confirmation" and llm.pending() == {}
    assert next(s for s in res.trace["steps"] if s["role"] == "router").get("change_of_held") is True
    engine.dispose()


def test_a_second_request_answered_with_what_the_first_said_is_not_said_twice():
    from chops.pipeline.agenda import joined
    from chops.records import TurnResult

    paid = TurnResult(reply="You paid $829.43 for order #T0000006.", route="system", trace={"request": "what I paid"})
    again = TurnResult(reply="You paid $829.43 for order #T0000006.", route="system", trace={"request": "I'm NoNo"})
    other = TurnResult(reply="Order #T0000002 is pending.", route="system", trace={"request": "status"})
    assert joined(paid, again).reply == paid.reply and joined(paid, again).trace["requests"] == ["what I paid", "I'm NoNo"]
    assert joined(paid, other).reply == f"{paid.reply}\n\n{other.reply}"


def test_a_request_without_a_profile_is_routed_by_the_router_alone(tmp_path):
    """No profile (a sender the pack does not know): nothing the customer holds, the router's sure guide route stands."""
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.classifier import Classifier
    from chops.pipeline.context import TurnContext
    from chops.pipeline.trace import Trace
    from chops.router import Router, read_examples
    from tests.unit.test_router import BagOfWords, examples_file

    router = Router.train(read_examples(examples_file(tmp_path)), BagOfWords())
    classifier = Classifier(ScriptedLLM(), None, "", router=router, operations=OPERATIONS)
    trace = Trace()
    trace.iteration = 1
    ctx = TurnContext(nickname="t", text="how do i return the kettle and upload", profile=None, history=[], trace=trace)
    assert classifier.classify(ctx) == "guide"


def test_a_sentence_naming_a_kind_of_write_no_split_request_names_joins_the_request_it_shares_most_with():
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.splitting import _with_kinds
    message = ("Two things. Please cancel the order with the chair, I don't need it. And the kettle I received is "
               "going back; put its refund on my gift card.")
    parts = ["Cancel the order with the chair, I don't need it.", "Put the refund on my gift card for the kettle."]
    operations = list(OPERATIONS.values())
    assert _with_kinds(parts, message, operations) == [
        parts[0], "And the kettle I received is going back; Put the refund on my gift card for the kettle."]
    kept = ["Cancel the order with the chair.", "Return the kettle I received to my gift card."]
    assert _with_kinds(kept, message, operations) == kept  # every kind named is a request's
