"""An answer saying a change was made that nothing made is never sent (``chops.pipeline.claims``)."""

from __future__ import annotations

from chops.domain.outcomes import OperationResult, Outcome
from chops.pipeline.claims import claimed_changes
from chops.pipeline.context import Candidate, Step
from tests.unit.pipeline_support import demo_engine, make_agent, to_profile, verdict

PROFILE = {"user_id": "ann", "orders": ["#A1", "#A2", "#A3"], "statuses": [
    {"order_id": "#A1", "status": "cancelled", "names": ["Skateboard"]},
    {"order_id": "#A2", "status": "pending", "names": ["Sunglasses", "Desk Lamp"]},
    {"order_id": "#A3", "status": "delivered", "names": ["Kettle"]}]}


def _ctx(text: str, done: tuple[str, ...] = ()):
    profile = type("Profile", (), {"lookup_data": lambda self: PROFILE})()
    return type("Ctx", (), {"text": text, "profile": profile, "done": lambda self: list(done)})()


def _said(request: str, answer: str, done: tuple[str, ...] = (), lookups=()) -> list[str]:
    return claimed_changes(_ctx(request, done), Candidate(iteration=1, route="system", answer=answer,
                                                          lookups=list(lookups)))


def test_a_change_asked_for_and_said_as_done_of_a_record_not_in_that_state_is_a_claim():
    # The cancelled skateboard order makes no "has been cancelled" of the pending one true.
    assert _said("Please cancel my order with the sunglasses.",
                 "The order with the sunglasses in it has been cancelled.") == ["has been cancelled"]
    assert _said("Can you swap my desk lamp for a brighter one and update the address?",
                 "I've updated the address, and the lamp is now swapped.") == ["'ve updated", "is now swapped"]
    # A sentence naming no record: nothing read is in such a state.
    assert _said("exchange my kettle please", "Your kettle has been exchanged.") == ["has been exchanged"]


def test_a_record_in_that_state_a_commit_or_a_change_not_asked_for_is_no_claim():
    # The record the sentence names is in that state: "cancel #A1" of an order cancelled before.
    assert _said("Cancel order #A1.", "Order #A1 was already cancelled, so nothing to do.") == []
    assert _said("cancel the skateboard order", "The skateboard order was cancelled earlier.") == []
    # What may be, or will be, is said of no change made.
    assert _said("Can I return the kettle?", "Delivered items can be returned within 30 days.") == []
    # This conversation's commit did it.
    assert _said("return the kettle", "Your kettle has been returned.", done=("Return of 1 item(s) requested",)) == []
    # Not asked for: a state reported ("how much did I get back?"), checked by nothing here.
    assert _said("How much did I get back for the skateboard?", "It was refunded: $20.00 to your card.") == []
    # A record looked up this turn counts too.
    read = Step(operation="get_order", proposed_args={}, args={}, result=OperationResult(
        operation="get_order", outcome=Outcome.OK, message="", data={"order_id": "#A9", "status": "return requested"}))
    assert _said("return the order #A9", "Order #A9 has already been returned.", lookups=[read]) == []
    # A proposed operation is no answer.
    write = Step(operation="cancel", proposed_args={}, args={}, writes=True)
    assert claimed_changes(_ctx("cancel #A2"), Candidate(iteration=1, route="system", answer="was cancelled",
                                                        steps=[write])) == []


def test_an_answer_claiming_a_change_is_redone_and_never_sent(sqlite_url):
    agent, llm = make_agent(demo_engine(sqlite_url), verifier_reason="on_fail")
    to_profile(llm)
    llm.enqueue("executor", {"answer": "Done: your school has been changed to Riverside High."})
    to_profile(llm, fresh=False)
    llm.enqueue("executor", {"answer": "I can't change it from here; your school is listed in your profile."})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_busy_leader", "Please change my school to Riverside High.", turn_key="k:1")
    assert res.reply.startswith("I can't change it") and res.iterations == 2 and llm.pending() == {}
    first = next(s for s in res.trace["steps"] if s["role"] == "verifier")
    assert first["deterministic"] and first["claimed"] == ["has been changed"]
    redo = next(c[1][-1][1] for c in llm.calls if c[0] == "executor" and "rejected" in c[1][-1][1])
    assert "an answer changes nothing" in redo
