"""An answer saying a change was made that nothing made is never sent (``chops.pipeline.claims``)."""

from __future__ import annotations

from chops.domain.outcomes import OperationResult, Outcome
from chops.pipeline.claims import claimed_changes
from chops.pipeline.context import Candidate, Step
from tests.unit.pipeline_support import demo_engine, make_agent, to_profile, verdict


def _ctx(done: list[str] = (), profile: str = "Orders: #A1 pending, #A2 delivered"):
    return type("Ctx", (), {"profile_text": lambda self: profile, "done": lambda self: list(done)})()


def _said(answer: str, ctx=None, lookups=()) -> list[str]:
    return claimed_changes(ctx or _ctx(), Candidate(iteration=1, route="system", answer=answer, lookups=list(lookups)))


def test_a_change_said_as_done_that_nothing_given_names_is_a_claim():
    assert _said("Your lamp has been exchanged for the brass one.") == ["has been exchanged"]
    assert _said("I've updated the address, and the mug is now swapped.") == ["'ve updated", "is now swapped"]
    assert _said("The order was cancelled successfully.") == ["was cancelled"]


def test_what_was_given_says_so_or_what_may_be_is_no_claim():
    # What may be, or will be, is said of no change made.
    assert _said("Delivered items can be returned within 30 days; the refund will be processed in 5 days.") == []
    # The look-ups show a cancelled order: "it was cancelled" reads them.
    read = Step(operation="get_order", proposed_args={}, args={}, result=OperationResult(
        operation="get_order", outcome=Outcome.OK, message="", data={"order_id": "#A3", "status": "cancelled"}))
    assert _said("Order #A3 was cancelled.", lookups=[read]) == []
    # This conversation's commit did it.
    assert _said("Your lamp has been returned.", _ctx(done=["Return of 1 item(s) requested for #A2"])) == []
    # A proposed operation is no answer.
    write = Step(operation="cancel", proposed_args={}, args={}, writes=True)
    assert claimed_changes(_ctx(), Candidate(iteration=1, route="system", answer="was cancelled", steps=[write])) == []


def test_an_answer_claiming_a_change_is_redone_and_never_sent(sqlite_url):
    agent, llm = make_agent(demo_engine(sqlite_url), verifier_reason="on_fail")
    to_profile(llm)
    llm.enqueue("executor", {"answer": "Done: your school has been changed to Riverside High."})
    to_profile(llm, fresh=False)
    llm.enqueue("executor", {"answer": "Your school is listed as Hill School in your profile."})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_busy_leader", "Is my school listed right?", turn_key="k:1")
    assert res.reply.startswith("Your school is listed") and res.iterations == 2 and llm.pending() == {}
    first = next(s for s in res.trace["steps"] if s["role"] == "verifier")
    assert first["deterministic"] and first["claimed"] == ["has been changed"]
    redo = next(c[1][-1][1] for c in llm.calls if c[0] == "executor" and "rejected" in c[1][-1][1])
    assert "an answer changes nothing" in redo
