"""Everything the customer can (``chops.pipeline.everything``), on the made-up shop: Mia has pending orders #T0000001
(a steel kettle, two red wool scarves), #T0000002 (a chair) and #T0000006 (a red kettle), #T0000007 pending with its
items changed, #T0000003 delivered (a glass kettle, a silk scarf; paid by credit card), and others processed and
cancelled."""

from __future__ import annotations

import pytest

from apis.retail.registry import OPERATIONS
from chops.pipeline.everything import asked_everything, takes_everything
from tests.unit.pipeline_support import answering, to_system, verdict
from tests.unit.retail_support import MIA, order
from tests.unit.test_lookup_confirm import YES
from tests.unit.test_retail_agent import shop  # noqa: F401  (fixture)


@pytest.mark.parametrize("text, kinds", [
    ("Cancel or return everything I can, except my boots.", ["cancel", "return"]),
    ("Keep the boots and cancel or return the rest", ["cancel", "return"]),
    ("money is tight, so please cancel and return all my orders", ["cancel", "return"]),
    ("I'd like to send back everything possible.", ["return"]),  # one kind, "possible": every record
    ("Return whatever I can please", ["return"]),
    ("Cancel everything I can, but not the chair.", ["cancel"]),
    ("Return everything from my last order except the lamp", []),  # one record's lines (``together.all_but``)
    ("Cancel or return everything I bought that's not for the kitchen", []),  # narrowed by a clause
    ("Return everything, please", []),  # one kind, no "I can": the model's plan, as ever
    ("Cancel or return everything in #W1234567", []),  # an id typed
    ("Exchange the boots, or else cancel or return the rest", []),  # a swap asked too: its own plan first
    ("Cancel the order or return it, that's all", []),  # "that's all" takes in nothing
])
def test_a_request_of_everything_names_the_writes_of_every_record(text, kinds):
    assert [op.kind for op in asked_everything(OPERATIONS.values(), text)] == kinds


def test_only_writes_whose_arguments_the_data_gives_are_made_for_every_record():
    assert sorted(n for n, op in OPERATIONS.items() if takes_everything(op)) == [
        "cancel_pending_order", "return_delivered_order_items"]  # no swap, no address, no chosen payment method


def test_everything_but_what_is_kept_is_one_plan_committed_on_the_yes(shop):  # noqa: F811
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, "Cancel or return everything I can, except the chair. I no longer need them.",
                         turn_key="e:1", conversation_id="e")
    assert asked.outcome == "pending_confirmation" and not asked.committed
    assert [(s["operation"], s["args"]) for s in asked.steps] == [
        ("cancel_pending_order", {"order_id": "#T0000001", "reason": "no longer needed"}),
        ("cancel_pending_order", {"order_id": "#T0000006", "reason": "no longer needed"}),
        ("return_delivered_order_items", {"order_id": "#T0000003", "item_ids": ["k-glass-1l", "s-silk-red"],
                                          "payment_method_id": "credit_card_mia"})]
    assert order(engine, "#T0000003")["status"] == "delivered"  # nothing before the yes
    llm.enqueue("classifier", YES)
    done = agent.handle(MIA, "yes", history=[asked.to_record("…")], turn_key="e:2", conversation_id="e")
    assert done.committed
    assert [order(engine, o)["status"] for o in ("#T0000001", "#T0000006", "#T0000003", "#T0000002", "#T0000007")] \
        == ["cancelled", "cancelled", "return requested", "pending", "pending (item modified)"]


def test_a_reason_nobody_gave_is_asked_and_the_answer_completes_the_plan(shop):  # noqa: F811
    agent, engine, llm = shop
    to_system(llm)
    llm.enqueue("verifier", verdict(9))
    text = "Keep the chair and cancel or return the rest."
    asked = agent.handle(MIA, text, turn_key="r:1", conversation_id="r")
    assert asked.outcome == "refused_missing_args" and "reason" in asked.reply
    answering(llm)
    llm.enqueue("verifier", verdict(9))
    given = agent.handle(MIA, "I ordered them by mistake", history=[asked.to_record(text)], turn_key="r:2",
                         conversation_id="r")
    assert given.outcome == "pending_confirmation"
    assert [(s["args"]["order_id"], s["args"].get("reason")) for s in given.steps] == [
        ("#T0000001", "ordered by mistake"), ("#T0000006", "ordered by mistake"), ("#T0000003", None)]


def test_a_kept_line_stays_out_of_the_return_and_a_record_of_kept_lines_out_of_the_plan(shop):  # noqa: F811
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("verifier", verdict(9))
    asked = agent.handle(MIA, "Return whatever I can, but keep the silk scarf.", turn_key="k:1", conversation_id="k")
    assert [(s["operation"], s["args"]["item_ids"]) for s in asked.steps] == [
        ("return_delivered_order_items", ["k-glass-1l"])]
