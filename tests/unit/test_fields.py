"""An answer leaving out the field its question names by every word of its key is redone
(``chops.pipeline.fields.unstated``, the verifier's ``check_unstated``)."""

from __future__ import annotations

from chops.domain.outcomes import OperationResult, Outcome
from chops.pipeline.context import Step
from chops.pipeline.fields import unstated
from tests.unit.pipeline_support import FakeIndex, call, to_system, verdict

ORDER = {"order_id": "#B7", "status": "return requested", "total": 900.5, "remaining_items_total": 610.25,
         "tracking_ids": ["5550001"], "return": {"items": ["i-1"], "method": "paypal_bo"}}


def _read(data: dict) -> Step:
    return Step(operation="get_order_details", proposed_args={}, args={"order_id": data["order_id"]},
                result=OperationResult(operation="get_order_details", outcome=Outcome.OK, message="", data=data))


def test_a_field_the_question_names_by_every_word_of_its_key_must_be_said():
    asked = "And what did I pay in total for the remaining items of that order?"
    assert unstated(asked, "You paid $290.25 for the items you return.", [_read(ORDER)]) == [
        "remaining items total: 610.25"]
    for answer in ("The remaining items came to $610.25.", "610.25 dollars", "$610.250"):
        assert unstated(asked, answer, [_read(ORDER)]) == [], answer
    # A key of one word may be another total than the question's ("the total refund"): not checked.
    assert unstated("What's the total refund?", "You get $290.25 back.", [_read(ORDER)]) == []
    # Named by a word of its key only ("remaining"), or by none: nothing to say.
    assert unstated("Which items are remaining?", "The lamp.", [_read(ORDER)]) == []
    # Of several records, the value of one said is enough.
    other = {**ORDER, "order_id": "#B8", "remaining_items_total": 12.0}
    assert unstated(asked, "That order's remaining items cost $12.00.", [_read(ORDER), _read(other)]) == []


def test_an_answer_without_the_field_asked_is_redone_told_the_field(sqlite_url):
    from apis.retail.pack import RetailPack
    from chops.i18n import use_catalogs
    from chops.llm import ScriptedLLM
    from chops.pending import PendingChanges
    from chops.pipeline import Agent
    from chops.settings import get_settings
    from tests.unit.retail_support import MIA, load_shop
    from tests.unit.test_lookup_confirm import Approvals

    engine, api = load_shop(sqlite_url)
    llm = ScriptedLLM()
    use_catalogs(RetailPack.locale)
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals(), pending=PendingChanges(engine, 600))
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It is your chair order."}]})
    to_system(llm, fresh=False)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Its order id is #T0000002."}]})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, "What's the order id of the order with the chair?", turn_key="f:1", conversation_id="f")
    assert res.reply.startswith("Its order id is #T0000002.") and res.iterations == 2 and llm.pending() == {}
    first = next(s for s in res.trace["steps"] if s["role"] == "verifier")
    assert first["deterministic"] and first["unstated"] == ["order id: #T0000002"]
    redo = [c[1][-1][1] for c in llm.calls if c[0] == "executor"][-1]
    assert "the look-ups hold what was asked (order id: #T0000002)" in redo
    # Left out again and again (the 1.5B decodes greedily): never sent; what the look-up says of the field is.
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    for _ in range(4):
        llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It is your chair order."}]})
        to_system(llm, fresh=False)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It is your chair order."}]})
    res = agent.handle(MIA, "What's the order id of the order with the chair?", turn_key="g:1", conversation_id="g")
    assert res.reply.startswith("#T0000002: order id: #T0000002") and "chair order" not in res.reply
    engine.dispose()
