"""Look up, then act; and confirmation before a write — on a made-up shop whose reads are look-ups and whose
write waits for the customer's yes. The model is scripted; the pending changes live in a real SQLite table."""

from __future__ import annotations

import json
import time

import pytest
import sqlalchemy as sa

from chops import tables as ct
from chops.db import make_engine
from chops.llm import ScriptedLLM
from chops.migrate import AGENT, upgrade_histories
from chops.pending import PendingChanges
from chops.pipeline import Agent
from chops.settings import get_settings
from tests.unit.pipeline_support import FakeIndex, call, prompt_text, to_guide, to_system, verdict
from tests.unit.shop_fake import ShopApi

YES, NO, OTHER, UNCLEAR = ({"answer": a} for a in ("yes_go_ahead", "no_do_not", "something_else", "unclear"))
EXCHANGE = call("Exchange", order_id="#A1", item_id="i-blue", new_item_id="i-red")


class Approvals:
    """No approval policies; records what would have gone to staff."""

    def __init__(self) -> None:
        self.queued: list[dict] = []

    def needs_approval(self, operation: str) -> bool:
        return False

    def queue_approval(self, **kwargs) -> int:
        self.queued.append(kwargs)
        return len(self.queued)


@pytest.fixture
def shop(tmp_path):
    """(agent, shop, model, pending changes, approvals) over a fresh SQLite file."""
    engine = make_engine(f"sqlite:///{tmp_path / 'shop.db'}")
    upgrade_histories(engine, [AGENT])  # the agent's own tables (the shop is in memory)
    api, llm, approvals = ShopApi(), ScriptedLLM(), Approvals()
    pending = PendingChanges(engine, ttl_s=600)
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=approvals, pending=pending)
    return agent, api, llm, pending, approvals


def ask_exchange(agent, llm, text="Please swap the lamp in order #A1 for the red one", key="c1:1"):
    """The customer asks; the model looks the order and the variants up, then proposes the exchange."""
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A1"))
    llm.enqueue("executor", call("GetVariants", item_id="i-blue"))
    llm.enqueue("executor", EXCHANGE).enqueue("verifier", verdict(9))
    return agent.handle("ann", text, turn_key=key, conversation_id="c1")


def states(engine_or_pending) -> list[str]:
    with engine_or_pending.engine.connect() as conn:
        return [r.state for r in conn.execute(sa.select(ct.pending_change).order_by(ct.pending_change.c.id))]



def test_the_verifier_sees_what_the_look_ups_said_of_the_plans_values_only(shop):
    agent, _, llm, _, _ = shop
    ask_exchange(agent, llm)
    seen = prompt_text(llm, "verifier")
    # The order's line and the chosen variant's, not every variant the look-up listed.
    assert "i-blue: desk lamp (blue)" in seen and "i-red: desk lamp (red)" in seen
    assert "green" not in seen and "GetVariants(" not in seen


def test_looks_up_then_describes_the_change_and_writes_nothing_until_yes(shop):
    agent, api, llm, pending, _ = shop
    before = api.state["orders"]["#A1"].copy()
    result = ask_exchange(agent, llm)
    # The second and third executor prompts carried what the look-ups returned.
    assert "GetOrder(order_id='#A1')" in prompt_text(llm, "executor", 1) and "desk lamp (blue)" in prompt_text(
        llm, "executor", 1)
    assert "desk lamp (red)" in prompt_text(llm, "executor", 2)
    # i-blue and i-red were never typed: grounded by the look-ups, so the plan stands as proposed.
    assert result.operation == "Exchange" and result.args["new_item_id"] == "i-red"
    assert result.outcome == "pending_confirmation" and not result.committed
    assert result.pending["operations"] == ["Exchange"] and "exchange requested" in result.pending["description"]
    assert "Shall I go ahead?" in result.reply and "2.5" in result.reply  # the diff, price difference included
    assert api.state["orders"]["#A1"] == before and api.audit == []
    assert states(pending) == ["open"] and result.trace["pending"]["id"] == result.pending["id"]


def test_yes_commits_exactly_the_described_plan(shop):
    agent, api, llm, pending, _ = shop
    ask_exchange(agent, llm)
    llm.enqueue("classifier", YES)
    result = agent.handle("ann", "yes, go ahead", turn_key="c1:2", conversation_id="c1")
    assert result.committed and result.trace["confirmed"] is True and result.outcome == "ok"
    assert api.state["orders"]["#A1"]["status"] == "exchange requested"
    assert api.state["orders"]["#A1"]["exchange"] == ["i-blue", "i-red"]
    assert [a["operation"] for a in api.audit] == ["Exchange"] and states(pending) == ["committed"]
    assert "Done" in result.reply
    assert "swap the lamp" in prompt_text(llm, "classifier", -1) or "Exchange" in prompt_text(llm, "classifier", -1)
    # A second yes finds nothing open: it is a new message, not a second commit.
    llm.enqueue("classifier", {"route": "small_talk"}).enqueue("classifier", {"route": "thanks_or_goodbye"})
    agent.handle("ann", "yes", turn_key="c1:3", conversation_id="c1")
    assert len(api.audit) == 1


def test_no_drops_the_change_and_nothing_is_written(shop):
    agent, api, llm, pending, _ = shop
    ask_exchange(agent, llm)
    llm.enqueue("classifier", NO)
    result = agent.handle("ann", "hmm, no, leave it", turn_key="c1:2", conversation_id="c1")
    assert result.outcome == "declined" and not result.committed and "not changed anything" in result.reply
    assert api.state["orders"]["#A1"]["status"] == "delivered" and api.audit == []
    assert states(pending) == ["declined"]


def test_a_reply_neither_yes_nor_no_asks_again_and_keeps_the_change(shop):
    agent, api, llm, pending, _ = shop
    first = ask_exchange(agent, llm)
    llm.enqueue("classifier", UNCLEAR)
    again = agent.handle("ann", "the one I have is too dark", turn_key="c1:2", conversation_id="c1")
    assert again.outcome == "pending_confirmation" and not again.committed and api.audit == []
    assert again.reply.startswith("I could not tell whether that is a yes.\nHere is what I will do:")
    assert again.pending["id"] == first.pending["id"] and states(pending) == ["open"]
    llm.enqueue("classifier", YES)
    assert agent.handle("ann", "yes", turn_key="c1:3", conversation_id="c1").committed
    assert states(pending) == ["committed"] and len(api.audit) == 1


def test_a_second_reply_in_a_row_neither_yes_nor_no_drops_the_change_and_is_handled_as_a_request(shop):
    agent, api, llm, pending, _ = shop
    first = ask_exchange(agent, llm)
    history = [first.to_record("Please swap the lamp in order #A1 for the red one")]
    llm.enqueue("classifier", UNCLEAR)
    again = agent.handle("ann", "hmm, not that", history=history, turn_key="c1:2", conversation_id="c1")
    assert again.outcome == "pending_confirmation" and states(pending) == ["open"]
    # read as unclear once more: not the same question a third time, the message is the request it is
    llm.enqueue("classifier", UNCLEAR)
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A2"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Order #A2 is pending."}]})
    llm.enqueue("verifier", verdict(9))
    history.append(again.to_record("hmm, not that"))
    result = agent.handle("ann", "That's the wrong one. Look at #A2 instead.", history=history, turn_key="c1:3",
                          conversation_id="c1")
    assert result.reply == "Order #A2 is pending." and not result.committed
    assert api.audit == [] and states(pending) == ["dropped"] and llm.pending() == {}


def test_a_reply_neither_yes_nor_no_that_names_a_change_is_handled_as_a_request(shop):
    agent, api, llm, pending, _ = shop
    ask_exchange(agent, llm)
    llm.enqueue("classifier", UNCLEAR)  # the model's reading; the change it names makes it a request
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A2"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Order #A2 is pending."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle("ann", "Hold on, not yet. I also want to exchange the mug in #A2.", turn_key="c1:2",
                          conversation_id="c1")
    assert not result.committed and api.audit == [] and states(pending) == ["dropped"] and llm.pending() == {}


def test_a_moved_state_is_described_again_not_committed(shop):
    agent, api, llm, pending, _ = shop
    ask_exchange(agent, llm)
    api.state["variants"]["i-red"]["price"] = 35.0  # the price changed while the customer was reading
    llm.enqueue("classifier", YES)
    result = agent.handle("ann", "yes", turn_key="c1:2", conversation_id="c1")
    assert not result.committed and result.outcome == "pending_confirmation" and "5.0" in result.reply
    assert "changed since I described" in result.reply and api.audit == []
    assert states(pending) == ["superseded", "open"]
    llm.enqueue("classifier", YES)
    assert agent.handle("ann", "ok yes", turn_key="c1:3", conversation_id="c1").committed
    assert api.state["orders"]["#A1"]["price_difference"] == 5.0


def test_a_change_refused_on_recheck_writes_nothing(shop):
    agent, api, llm, pending, _ = shop
    ask_exchange(agent, llm)
    api.state["orders"]["#A1"]["status"] = "cancelled"
    llm.enqueue("classifier", YES)
    result = agent.handle("ann", "yes", turn_key="c1:2", conversation_id="c1")
    assert not result.committed and result.outcome == "refused_precondition" and api.audit == []
    assert states(pending) == ["refused"]


def test_a_late_yes_commits_nothing(shop, tmp_path):
    agent, api, llm, pending, _ = shop
    pending.ttl_s = 0.01
    ask_exchange(agent, llm)
    time.sleep(0.05)
    llm.enqueue("classifier", YES)
    result = agent.handle("ann", "yes", turn_key="c1:2", conversation_id="c1")
    assert result.outcome == "lapsed" and not result.committed and "too long" in result.reply
    assert api.audit == [] and states(pending) == ["lapsed"]


def test_another_request_in_between_drops_the_change_and_is_handled(shop):
    agent, api, llm, pending, _ = shop
    ask_exchange(agent, llm)
    llm.enqueue("classifier", OTHER)
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A2"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Order #A2 is pending."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle("ann", "wait, what is the status of #A2?", turn_key="c1:2", conversation_id="c1")
    assert result.reply == "Order #A2 is pending." and not result.committed
    assert api.audit == [] and states(pending) == ["dropped"]


def test_chinese_gets_the_question_in_chinese(shop):
    agent, api, llm, _, _ = shop
    result = ask_exchange(agent, llm, text="请把订单#A1里的台灯换成红色的")
    assert "要继续吗" in result.reply and result.outcome == "pending_confirmation"
    llm.enqueue("classifier", NO)
    assert "没有做任何修改" in agent.handle("ann", "算了", turn_key="c1:2", conversation_id="c1").reply


def test_a_value_neither_typed_nor_looked_up_is_not_used(shop):
    agent, api, llm, pending, _ = shop
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A1"))
    # i-green was never looked up (no variants read) nor typed: dropped, so nothing is offered.
    llm.enqueue("executor", call("Exchange", order_id="#A1", item_id="i-blue", new_item_id="i-green"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle("ann", "exchange my lamp in #A1", turn_key="c1:1", conversation_id="c1")
    assert result.args["new_item_id"] is None and result.outcome == "refused_missing_args"
    # The customer is asked in words (the argument's description), not for "new_item_id".
    assert "the variant to get instead" in result.reply and "new_item_id" not in result.reply
    assert result.pending is None and states(pending) == []


def test_another_customers_order_cannot_be_looked_up(shop):
    agent, api, llm, _, _ = shop
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#B1"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "I cannot find that order."}]})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle("ann", "what's in order #B1?", turn_key="c1:1", conversation_id="c1")
    assert "not_in_system" in prompt_text(llm, "executor", 1) and "desk lamp" not in prompt_text(llm, "executor", 1)
    assert result.reply == "I cannot find that order."


def test_the_step_budget_ends_the_look_ups_with_a_clear_reply(shop):
    agent, api, llm, _, _ = shop
    agent.executor.steps = 2
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A1"))
    llm.enqueue("executor", call("GetOrder", order_id="#A2"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle("ann", "tell me about #A1 and #A2", turn_key="c1:1", conversation_id="c1")
    # The last step's look-up is the answer itself (its result, the read reply); nothing loops on.
    assert result.operation == "GetOrder" and "Order #A2" in result.reply and llm.pending() == {}


def test_without_a_conversation_to_ask_in_the_write_goes_to_staff(shop):
    agent, api, llm, _, approvals = shop
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A1")).enqueue("executor", call("GetVariants", item_id="i-blue"))
    llm.enqueue("executor", EXCHANGE).enqueue("verifier", verdict(9))
    result = agent.handle("ann", "swap the lamp in #A1 for the red one", turn_key="k:1")
    assert result.queued and not result.committed and api.audit == []
    assert approvals.queued[0]["operation"] == "Exchange"


def test_a_change_to_confirm_the_verifier_rejects_is_asked_again_not_queued_or_offered(shop):
    agent, api, llm, _, approvals = shop
    agent.closing_question = True
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A1")).enqueue("executor", call("GetVariants", item_id="i-blue"))
    llm.enqueue("executor", EXCHANGE).enqueue("verifier", verdict(2))
    to_system(llm, fresh=False)
    llm.enqueue("executor", EXCHANGE)  # the same attempt again: its verdict is reused, and the loop stops
    result = agent.handle("ann", "swap the lamp in #A1 for the red one", turn_key="u:1", conversation_id="u")
    assert result.outcome == "unsure" and "tell me again" in result.reply and not result.pending
    assert not result.queued and approvals.queued == [] and api.audit == [] and llm.pending() == {}
    assert "anything else" not in result.reply  # a question is open


def test_a_finished_request_asks_for_anything_else_an_open_question_does_not(shop):
    agent, api, llm, _, _ = shop
    agent.closing_question = True
    asked = ask_exchange(agent, llm)
    assert "anything else" not in asked.reply  # the yes/no question is open
    llm.enqueue("classifier", YES)
    done = agent.handle("ann", "yes", turn_key="c1:2", conversation_id="c1")
    assert done.committed and done.reply.endswith("Is there anything else I can help you with?")


def answer(text: str) -> dict:
    """A scripted executor step that answers from the look-ups."""
    return {"calls": [{"operation": "AnswerDirectly", "answer": text}]}


def offers(schema, operation: str) -> bool:
    """Whether a step's plan grammar lets the model call ``operation``."""
    return f'"{operation}"' in json.dumps(schema.model_json_schema())


def test_the_same_look_up_again_makes_the_next_step_act_or_answer(shop):
    from eval.conversations.session import turn_calls

    agent, api, llm, _, _ = shop
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A1")).enqueue("executor", call("GetOrder", order_id="#A1"))
    llm.enqueue("executor", answer("Order #A1 holds a blue desk lamp.")).enqueue("verifier", verdict(9))
    result = agent.handle("ann", "I need help with #A1", turn_key="c1:1", conversation_id="c1")
    schemas = [schema for role, _, schema in llm.calls if role == "executor"]
    # The repeat is not run again; the next step may only write or answer: what it needs is already shown.
    assert offers(schemas[1], "GetOrder") and not offers(schemas[2], "GetOrder") and offers(schemas[2], "Exchange")
    assert result.reply.startswith("Order #A1 holds a blue desk lamp.") and llm.pending() == {}
    # The conversation eval reads the turn's look-ups from the trace (a count is not a list of look-ups).
    assert [c["operation"] for c in turn_calls(result)] == ["GetOrder"]


def test_an_attempt_that_proposes_nothing_is_rejected_without_the_verifier_and_redone(shop):
    agent, api, llm, _, _ = shop
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A1")).enqueue("executor", answer(" "))
    to_system(llm, fresh=False)  # the second iteration, with the deterministic reason as feedback
    llm.enqueue("executor", call("GetOrder", order_id="#A1")).enqueue("executor", answer("It is delivered."))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle("ann", "I need help with #A1", turn_key="c1:1", conversation_id="c1")
    assert result.reply.startswith("It is delivered.") and result.iterations == 2 and llm.pending() == {}
    assert "proposed nothing" in prompt_text(llm, "executor", 2)  # the retry is told why
    assert [role for role, _, _ in llm.calls].count("verifier") == 1  # the empty attempt cost no verifier call



def test_a_reply_off_the_schema_twice_is_redone_once_told_why(shop):
    agent, api, llm, _, _ = shop
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A1")).enqueue("executor", call("GetVariants", item_id="i-blue"))
    llm.enqueue("executor", '{"calls": [{"operation": "Exchange", "args": {"order_id": "#A1", "item_id": "i-bl')
    llm.enqueue("executor", '{"calls": [{"operation": "Exchange", "args": {"order_id": "#A1", "item_id": "i-bl')
    to_system(llm, fresh=False)
    llm.enqueue("executor", EXCHANGE).enqueue("verifier", verdict(9))
    result = agent.handle("ann", "swap the lamp in #A1 for the red one", turn_key="c1:1", conversation_id="c1")
    assert result.outcome == "pending_confirmation" and result.iterations == 2 and llm.pending() == {}
    assert "Attempt 1 was cut off" in prompt_text(llm, "executor", 4)  # the retry is told why
    # Once a turn: the same failure again ends the turn with an apology the customer can act on (an error ended the
    # first turn of train task 2's conversation), and nothing runs.
    to_system(llm)
    llm.enqueue("executor", "{").enqueue("executor", "{")
    to_system(llm, fresh=False)
    llm.enqueue("executor", "{").enqueue("executor", "{")
    again = agent.handle("ann", "swap the lamp in #A1 for the red one", turn_key="c2:1", conversation_id="c2")
    assert "couldn't find an answer" in again.reply and again.operation is None and not again.error
    assert api.audit == [] and llm.pending() == {}

def test_two_empty_attempts_end_the_turn_honestly(shop):
    agent, api, llm, _, _ = shop
    agent.closing_question = True
    to_system(llm)
    llm.enqueue("executor", answer(""))
    to_system(llm, fresh=False)
    llm.enqueue("executor", answer(""))
    result = agent.handle("ann", "I need help with #A1", turn_key="c1:1", conversation_id="c1")
    assert "couldn't find an answer" in result.reply and api.audit == [] and not result.committed
    assert result.iterations == 2 and llm.pending() == {}  # the same empty attempt twice: no third round
    # Not a finished request: no "anything else?" (a customer would take it as the end of the conversation).
    assert "anything else" not in result.reply


def test_a_plan_the_platform_refuses_is_redone_once_told_why(shop):
    agent, api, llm, _, _ = shop
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A1"))
    llm.enqueue("executor", call("Exchange", order_id="#A1", item_id="i-red", new_item_id="i-green"))  # not in #A1
    to_system(llm, fresh=False)  # told the refusal; the look-up is still shown, so no step reads it again
    llm.enqueue("executor", call("Exchange", order_id="#A1", item_id="i-blue", new_item_id="i-green"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle("ann", "swap the lamp I received (i-red?) for i-green", turn_key="c1:1", conversation_id="c1")
    assert result.outcome == "pending_confirmation" and result.args["item_id"] == "i-blue" and llm.pending() == {}
    retry = prompt_text(llm, "executor", 2)
    assert "That exchange is not possible" in retry and "[1] GetOrder(order_id='#A1')" in retry
    # The reason comes last: the retry's prompt is the refused step's with it appended, so the engine finds all
    # of that step's prompt cached and reads only the reason.
    users = [msgs[-1][1] for role, msgs, _ in llm.calls if role == "executor"]
    assert users[2].startswith(users[1]) and "That exchange is not possible" in users[2][len(users[1]):]
    assert [role for role, _, _ in llm.calls].count("verifier") == 1  # the refused plan cost no verifier call
    assert api.audit == []


@pytest.mark.parametrize("echoed", [False, True])
def test_a_refusal_the_redo_only_answers_about_is_told_in_the_platforms_words(shop, echoed):
    agent, api, llm, _, _ = shop
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A2"))
    llm.enqueue("executor", call("Exchange", order_id="#A2", item_id="i-red", new_item_id="i-green"))
    to_system(llm, fresh=False)
    said = "Order #A2 is still pending, so it cannot be exchanged yet."
    # A small model may copy the instruction it was given with the refusal: the customer does not read that.
    said += " Read the look-ups again and choose the operation and values that fit them." if echoed else ""
    llm.enqueue("executor", answer(said))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle("ann", "exchange the red lamp in #A2 for i-green", turn_key="c1:1", conversation_id="c1")
    # The model's answer is not sent: the refusal is (a 1.5B answer about a refused refund named a product nobody had
    # and the verifier passed it: train task 83).
    assert result.reply.startswith("I couldn't do that: Only a delivered order can be exchanged.")
    assert result.iterations == 2 and "still pending" not in result.reply and "look-ups" not in result.reply
    assert result.outcome == "refused_precondition" and not result.committed
    assert llm.pending() == {} and api.audit == []
    # Refused against a precondition (the order's status), the operation is not offered to the retry.
    retry = [schema for role, _, schema in llm.calls if role == "executor"][-1]
    assert not offers(retry, "Exchange") and offers(retry, "GetVariants")


def test_an_answer_of_another_route_after_a_refusal_loses_the_instruction_it_copied(shop):
    agent, api, llm, _, _ = shop
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A2"))
    llm.enqueue("executor", call("Exchange", order_id="#A2", item_id="i-red", new_item_id="i-green"))
    to_guide(llm, fresh=False)  # the retry is routed to the guides, whose answer copies the feedback (train task 46)
    llm.enqueue("executor", {"source": 1, "answer": "The platform refused it: order #A2 is pending. Read the look-ups "
                                                    "again and choose the operation and values that fit them."})
    llm.enqueue("verifier", verdict(9))
    result = agent.handle("ann", "exchange the red lamp in #A2 for i-green", turn_key="c2:1", conversation_id="c2")
    assert "order #A2 is pending" in result.reply
    assert "look-ups" not in result.reply and "platform refused" not in result.reply.lower()
    assert llm.pending() == {} and api.audit == []


@pytest.mark.parametrize("reply", [
    "yes — but refund it to my other card instead",
    "Yes, confirmed. Cancel that other customer's order too.",
    "ok, go ahead, as long as the price stays the same",
    "好的，但是换成红色的",
    "可以，不过只换台灯",
])
def test_a_yes_with_a_condition_or_another_choice_commits_nothing(shop, reply):
    agent, api, llm, pending, _ = shop
    ask_exchange(agent, llm)
    llm.enqueue("classifier", YES)  # the model reads a yes; the condition the reply sets is not agreed to
    to_system(llm)
    llm.enqueue("executor", answer("Which card would you like the refund on?")).enqueue("verifier", verdict(9))
    result = agent.handle("ann", reply, turn_key="c1:2", conversation_id="c1")
    assert not result.committed and api.audit == [] and states(pending) == ["dropped"]
    assert api.state["orders"]["#A1"]["status"] == "delivered"


@pytest.mark.parametrize("reply", ["yes, go ahead", "Yes please, thank you!", "好的，确认", "是的，请办理"])
def test_a_plain_yes_in_either_language_commits(shop, reply):
    agent, api, llm, pending, _ = shop
    ask_exchange(agent, llm)
    llm.enqueue("classifier", YES)
    assert agent.handle("ann", reply, turn_key="c1:2", conversation_id="c1").committed
