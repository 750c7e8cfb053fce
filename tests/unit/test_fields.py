"""An answer leaving out the field its question names by every word of its key is redone
(``chops.pipeline.fields.unstated``, the verifier's ``check_unstated``)."""

from __future__ import annotations

import pytest

from chops.domain.outcomes import OperationResult, Outcome
from chops.pipeline.context import Step
from chops.pipeline.fields import sums_asked, unlike, unstated
from tests.unit.pipeline_support import GUIDE_CHUNKS, FakeIndex, call, prompt_text, to_guide, to_system, verdict
from tests.unit.retail_support import MIA, load_shop

ORDER = {"order_id": "#B7", "status": "return requested", "total": 900.5, "remaining_items_total": 610.25,
         "tracking_ids": ["5550001"], "return": {"items": ["i-1"], "method": "paypal_bo"}}


def _read(data: dict) -> Step:
    return Step(operation="get_order_details", proposed_args={}, args={"order_id": data["order_id"]},
                result=OperationResult(operation="get_order_details", outcome=Outcome.OK, message="", data=data))


@pytest.fixture
def shop(sqlite_url):
    """(the retail agent over the test shop, its scripted model), the shop's catalog in use."""
    from apis.retail.pack import RetailPack
    from chops.i18n import use_catalogs
    from chops.llm import ScriptedLLM
    from chops.pending import PendingChanges
    from chops.pipeline import Agent
    from chops.settings import get_settings
    from tests.unit.test_lookup_confirm import Approvals

    engine, api = load_shop(sqlite_url)
    llm = ScriptedLLM()
    use_catalogs(RetailPack.locale)
    yield Agent(api, llm, get_settings(), FakeIndex(GUIDE_CHUNKS), approvals=Approvals(),
                pending=PendingChanges(engine, 600)), llm
    engine.dispose()


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


def _read_then_answered(llm, order_id: str, *answers: str) -> None:
    """Script the system route, the look-up of ``order_id``, the ``answers`` in turn and a passing verdict."""
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id=order_id))
    for answer in answers:
        llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": answer}]})
    llm.enqueue("verifier", verdict(9))


def test_an_answer_without_the_field_asked_is_redone_told_the_field(shop):
    agent, llm = shop
    # The redo keeps the route whose look-ups hold the answer: no classifier is asked again.
    _read_then_answered(llm, "#T0000002", "It is your chair order.", "Its order id is #T0000002.")
    res = agent.handle(MIA, "What's the order id of the order with the chair?", turn_key="f:1", conversation_id="f")
    assert res.reply.startswith("Its order id is #T0000002.") and res.iterations == 2 and llm.pending() == {}
    first = next(s for s in res.trace["steps"] if s["role"] == "verifier")
    assert first["deterministic"] and first["unstated"] == ["order id: #T0000002"]
    assert any(s["role"] == "classifier" and s.get("held") and s["route"] == "system" for s in res.trace["steps"])
    redo = [c[1][-1][1] for c in llm.calls if c[0] == "executor"][-1]
    assert "the look-ups hold what was asked (order id: #T0000002)" in redo
    # Left out again and again (the 1.5B decodes greedily): never sent; what the look-up says of the field is.
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    for _ in range(5):
        llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It is your chair order."}]})
    res = agent.handle(MIA, "What's the order id of the order with the chair?", turn_key="g:1", conversation_id="g")
    assert res.reply.startswith("What I found in your records: #T0000002: order id: #T0000002")
    assert "chair order" not in res.reply


def _items(order_id: str, *items: tuple[str, float]) -> dict:
    return {"order_id": order_id, "status": "delivered", "total": sum(p for _, p in items),
            "items": [{"item_id": f"i{n}", "name": name, "options": "size: L", "price": price}
                      for n, (name, price) in enumerate(items)],
            "payments": [{"type": "payment", "amount": sum(p for _, p in items), "method": "paypal_1"}]}


def test_a_sum_the_question_asks_over_the_records_entries_must_be_said():
    lamps = [_read(_items("#C1", ("Desk Lamp", 40.1), ("Kettle", 999.0))), _read(_items("#C2", ("Desk Lamp", 35.25)))]

    def left_out(question: str, answer: str, lookups: list[Step] = lamps) -> list[str]:
        return unstated(question, answer, lookups, sums_asked(question, lookups))

    asked = "What did I pay in total for all the desk lamps I bought?"
    assert sums_asked(asked, lamps) == ["Desk Lamp price total: 75.35"]
    # The order's total (a lamp beside a kettle) is no answer; both lamps' prices added are, across the orders.
    assert left_out(asked, "You paid $1,039.10 for them.") == ["Desk Lamp price total: 75.35"]
    assert left_out(asked, "The two desk lamps came to $75.35.") == []
    # Another wording of a sum; a record looked up twice counts once (its newest look-up).
    assert left_out("How much were both desk lamps altogether?", "$40.10", [*lamps, lamps[0]]) == [
        "Desk Lamp price total: 75.35"]
    # No sum asked ("all" alone asks none), one entry named, or a product named by only some of its words: nothing.
    for question in ("Show me all the desk lamps I bought.", "What's the total for the kettle?",
                     "What's the total of all the lamps?"):
        assert sums_asked(question, lamps) == [] and left_out(question, "$1,074.35") == [], question


def test_an_answer_stating_the_sum_asked_is_not_taken_for_invented():
    from chops.pipeline.context import Candidate
    from chops.pipeline.verifier import invented_numbers

    lamps = [_read(_items("#C1", ("Desk Lamp", 40.1), ("Kettle", 999.0))), _read(_items("#C2", ("Desk Lamp", 35.25)))]
    asked = "And the total price of all my desk lamps?"
    ctx = type("Ctx", (), {"text": asked, "user_texts": [asked], "profile_text": lambda self: "",
                           "done": lambda self: []})()
    sums = sums_asked(asked, lamps)
    cand = Candidate(iteration=1, route="system", answer="They cost $75.35 together.", lookups=lamps, sums=sums)
    assert invented_numbers(ctx, cand) == []
    assert invented_numbers(ctx, Candidate(iteration=1, route="system", answer="$75.00.", lookups=lamps,
                                           sums=sums)) == ["75.00"]


def test_the_last_word_is_what_any_attempts_look_ups_say_of_the_field_asked(shop):
    agent, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000002"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "It came to $99.99."}]})
    for _ in range(4):  # made up on the look-ups, then sent to the guides, which hold no price: made up again
        to_guide(llm, fresh=False)
        llm.enqueue("executor", {"source": 1, "answer": "It came to $99.99."})
    res = agent.handle(MIA, "What was my order's total again?", turn_key="h:1", conversation_id="h")
    assert "99.99" not in res.reply and res.reply.startswith("What I found in your records: #T0000002: total: 120.0")


def _two_kettles_read(llm) -> None:
    """Script the system route, then the look-ups of #T0000001 and #T0000003 (a steel and a glass kettle)."""
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000001"))
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))


def test_the_executor_is_shown_the_sum_asked_beside_the_look_ups(shop):
    agent, llm = shop
    _two_kettles_read(llm)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Your kettles came to $85.50."}]})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, "What did the kettles of my orders #T0000001 and #T0000003 cost altogether?",
                       turn_key="k:1", conversation_id="k")
    assert res.reply.startswith("Your kettles came to $85.50."), res.reply
    assert "[sum]" not in prompt_text(llm, "executor", 1)  # one kettle read: nothing to add up
    assert "[sum] Kettle price total: 85.5 (added up from the look-ups above)" in prompt_text(llm, "executor", 2)


SHIRTS = {"order_id": "#C3", "status": "processed", "items": [
    {"item_id": "i1", "name": "Desk Lamp", "options": "color: white, power: USB", "price": 30.0},
    {"item_id": "i2", "name": "Sweater", "options": "color: green, size: L, fabric: wool, fit: loose", "price": 60.0},
    {"item_id": "i3", "name": "Sweater", "options": "color: grey, size: XS, fabric: fleece, fit: loose", "price": 55.0}]}


EACH = ["Sweater (green, L, loose): fabric: wool", "Sweater (grey, XS, loose): fabric: fleece"]


@pytest.mark.parametrize("answer, missing", [
    # One fabric said of both sweaters: each one's is what the look-up says.
    ("You have a green L sweater and a grey XS sweater, both made of wool.", EACH),
    ("Both sweaters are wool.", EACH),
    ("The green L sweater is wool and the grey XS one is fleece.", []),  # each its own
    ("Your green sweater is made of wool.", []),  # described as the one it is: about that one only
    ("You ordered a green L and a grey XS sweater; both have a loose fit.", []),  # a feature they share
    ("You ordered two sweaters, a green and a grey one.", []),  # no fabric said
    ("Your desk lamp is white and runs on USB.", []),  # one entry of its name
])
def test_a_feature_said_of_like_entries_must_be_each_ones_own(answer, missing):
    assert unlike(answer, [_read(SHIRTS)]) == missing


def test_an_answer_giving_like_entries_one_feature_they_do_not_share_is_redone_told_each_ones(shop):
    agent, llm = shop
    _two_kettles_read(llm)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Both kettles are steel."}]})
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly",
                                        "answer": "The kettle of #T0000001 is steel, the other glass."}]})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle(MIA, "What are my kettles from #T0000001 and #T0000003 made of?", turn_key="u:1",
                       conversation_id="u")
    assert res.reply.startswith("The kettle of #T0000001 is steel, the other glass."), res.reply
    first = next(s for s in res.trace["steps"] if s["role"] == "verifier")
    assert first["deterministic"] and first["unlike"] == KETTLES, first
    assert f"({'; '.join(KETTLES)}); say each item's own" in prompt_text(llm, "executor", -1)
    # Said of both again and again (the 1.5B flips one's for the other's): never sent; what the look-ups say is.
    _two_kettles_read(llm)
    for material in ("steel", "glass", "steel", "glass", "steel"):
        llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": f"Both kettles are {material}."}]})
    res = agent.handle(MIA, "What are my kettles from #T0000001 and #T0000003 made of?", turn_key="v:1",
                       conversation_id="v")
    assert res.reply.startswith(f"What I found in your records: {'; '.join(KETTLES)}"), res.reply


KETTLES = ["Kettle (1L): material: steel", "Kettle (1L): material: glass"]


def test_asked_a_sum_every_record_holding_what_it_names_is_read_before_the_answer(shop):
    agent, llm = shop
    _read_then_answered(llm, "#T0000001", "Your kettles came to $40.00.", "Your kettles came to $124.49.")
    res = agent.handle(MIA, "What did all my kettles cost me in total?", turn_key="s:1", conversation_id="s")
    assert res.reply.startswith("Your kettles came to $124.49."), res.reply
    read = [x["args"]["order_id"] for s in res.trace["steps"] for x in s.get("lookups", ())
            if x["operation"] == "get_order_details"]
    assert sorted(read) == ["#T0000001", "#T0000003", "#T0000006"], read  # each order holding a kettle
    assert "[sum] Kettle price total: 124.49" in prompt_text(llm, "executor", -1)


def test_a_change_asked_with_its_total_is_shown_no_sum(shop):
    # Asked to return both vacuum cleaners and to say the total refund, the 1.5B, shown their sum, answered with it
    # and returned nothing (train task 46): a sum is a question's only.
    agent, llm = shop
    _two_kettles_read(llm)
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Which kettle do you mean?"}]})
    llm.enqueue("verifier", verdict(9))
    agent.handle(MIA, "Cancel the kettles of #T0000001 and #T0000003 and tell me the total refund.", turn_key="w:1",
                 conversation_id="w")
    assert "Kettle price total" not in prompt_text(llm, "executor", -1)
