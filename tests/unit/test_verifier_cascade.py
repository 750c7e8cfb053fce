"""The verifier that does not reread: a score alone first (``verifier_reason=on_fail``, or ``operations``: for
operations only), the reasoned verdict only when that score is under the pass mark; and a retry that keeps
the route a sure router chose."""

from __future__ import annotations

import pytest

from tests.unit.pipeline_support import demo_engine, make_agent, to_profile, verdict
from tests.unit.test_router import router  # noqa: F401  (the fixture: a router trained with a fake embedder)


@pytest.fixture
def engine(sqlite_url):
    return demo_engine(sqlite_url)


def verifier_steps(result) -> list[dict]:
    return [s for s in result.trace["steps"] if s["role"] == "verifier"]


def test_a_pass_costs_one_short_verifier_call_without_a_reason(engine):
    agent, llm = make_agent(engine, verifier_reason="on_fail")
    to_profile(llm)
    llm.enqueue("executor", {"answer": "You have 3 problems left to mark."}).enqueue("verifier", {"score": 9})
    res = agent.handle("demo_busy_leader", "How many papers do I still have to grade?", turn_key="c:1")
    assert res.reply == "You have 3 problems left to mark." and res.iterations == 1
    assert [c[2].__name__ for c in llm.calls if c[0] == "verifier"] == ["Score"]
    (step,) = verifier_steps(res)
    assert step["quick"] and step["passed"] and step["score"] == 9 and step["reason"] == ""
    # The quick call's prompt is the reasoned one plus one line at the end (the rest is the cached prefix).
    assert llm.calls[-1][1][-1][1].endswith("Give the score only.")
    assert llm.pending() == {}


def test_a_low_quick_score_asks_the_reasoned_verdict_and_that_verdict_decides(engine):
    agent, llm = make_agent(engine, verifier_reason="on_fail")
    to_profile(llm)
    llm.enqueue("executor", {"answer": "You have 3 problems left to mark."})
    llm.enqueue("verifier", {"score": 4}).enqueue("verifier", verdict(9, "the count matches the profile"))
    res = agent.handle("demo_busy_leader", "How many papers do I still have to grade?", turn_key="c:1")
    assert res.iterations == 1 and res.reply == "You have 3 problems left to mark."
    assert [c[2].__name__ for c in llm.calls if c[0] == "verifier"] == ["Score", "Verdict"]
    quick, reasoned = verifier_steps(res)
    assert quick["quick"] and reasoned["quick_score"] == 4
    assert reasoned["score"] == 9 and reasoned["passed"] and reasoned["reason"] == "the count matches the profile"
    # The reasoned prompt is the quick one without the last line: both share the whole prefix.
    quick_prompt, reasoned_prompt = (c[1][-1][1] for c in llm.calls if c[0] == "verifier")
    assert quick_prompt.startswith(reasoned_prompt) and quick_prompt != reasoned_prompt


def test_a_rejection_feeds_the_reason_of_the_reasoned_verdict_to_the_retry(engine):
    agent, llm = make_agent(engine, verifier_reason="on_fail")
    to_profile(llm)
    llm.enqueue("executor", {"answer": "You have 7 problems left."})
    llm.enqueue("verifier", {"score": 3}).enqueue("verifier", verdict(2, "the profile says 3, not 7"))
    to_profile(llm, fresh=False)
    llm.enqueue("executor", {"answer": "You have 3 problems left to mark."}).enqueue("verifier", {"score": 9})
    res = agent.handle("demo_busy_leader", "How many papers do I still have to grade?", turn_key="c:1")
    assert res.iterations == 2 and res.reply == "You have 3 problems left to mark."
    second_executor = [c for c in llm.calls if c[0] == "executor"][1]
    assert "the profile says 3, not 7" in second_executor[1][-1][1]
    assert llm.pending() == {}


def test_reason_first_is_the_papers_single_reasoned_call(engine):
    agent, llm = make_agent(engine, verifier_reason="first")
    to_profile(llm)
    llm.enqueue("executor", {"answer": "You have 3 problems left to mark."}).enqueue("verifier", verdict(9))
    res = agent.handle("demo_busy_leader", "How many papers do I still have to grade?", turn_key="c:1")
    assert [c[2].__name__ for c in llm.calls if c[0] == "verifier"] == ["Verdict"]
    assert "quick" not in verifier_steps(res)[0]


def test_operations_mode_scores_an_operation_alone_and_reasons_about_an_answer(engine):
    from tests.unit.pipeline_support import call, to_system

    agent, llm = make_agent(engine, verifier_reason="operations")
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", {"score": 9})
    write = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1")
    assert write.committed and verifier_steps(write)[0]["quick"]
    to_profile(llm)
    llm.enqueue("executor", {"answer": "Your limit is 40."}).enqueue("verifier", verdict(9))
    answer = agent.handle("demo_leader", "What is my upload limit?", turn_key="c:2")
    assert answer.reply == "Your limit is 40." and "quick" not in verifier_steps(answer)[0]
    assert [c[2].__name__ for c in llm.calls if c[0] == "verifier"] == ["Score", "Verdict"]
    assert llm.pending() == {}


def test_a_retry_keeps_the_route_the_router_was_sure_of_and_the_third_attempt_asks_the_model(
        engine, router):  # noqa: F811
    agent, llm = make_agent(engine, router=router, router_keeps_route=True)
    llm.enqueue("executor", {"answer": "Your limit is 99."}).enqueue("verifier", verdict(2, "wrong number"))
    llm.enqueue("executor", {"answer": "Your limit is 98."}).enqueue("verifier", verdict(2, "still wrong"))
    to_profile(llm, fresh=False)  # third attempt: the model classifier, with the reason (no gate on a retry)
    llm.enqueue("executor", {"answer": "Your upload limit is 30."}).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "what is my limit", turn_key="t:1")
    assert res.iterations == 3 and res.reply == "Your upload limit is 30."
    roles = [c[0] for c in llm.calls]
    assert roles == ["executor", "verifier", "executor", "verifier", "classifier", "executor", "verifier"]
    routers = [s for s in res.trace["steps"] if s["role"] == "router"]
    assert [s.get("kept", False) for s in routers] == [False, True]
    assert "wrong number" in [c for c in llm.calls if c[0] == "classifier"][0][1][-1][1]


def test_without_keeping_the_route_every_retry_asks_the_model_classifier(engine, router):  # noqa: F811
    agent, llm = make_agent(engine, router=router, router_keeps_route=False)
    llm.enqueue("executor", {"answer": "Your limit is 99."}).enqueue("verifier", verdict(2, "wrong number"))
    to_profile(llm, fresh=False)
    llm.enqueue("executor", {"answer": "Your upload limit is 30."}).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "what is my limit", turn_key="t:1")
    assert [c[0] for c in llm.calls] == ["executor", "verifier", "classifier", "executor", "verifier"]
    assert res.iterations == 2



@pytest.mark.parametrize("guide_profile", ["unsure", "always"])
def test_a_guide_answer_reads_the_profile_only_when_the_router_was_not_sure_of_the_guide_route(
        engine, router, guide_profile):  # noqa: F811
    from tests.unit.pipeline_support import to_guide

    agent, llm = make_agent(engine, router=router, guide_profile=guide_profile)
    llm.enqueue("executor", {"source": 1, "answer": "Open the upload page."}).enqueue("verifier", verdict(9))
    agent.handle("demo_leader", "how do i upload sheets", turn_key="g:1")  # the router is sure: guide
    to_guide(llm)  # the router is not sure of this one: the model classifier routes it
    llm.enqueue("executor", {"source": 1, "answer": "Open the upload page."}).enqueue("verifier", verdict(9))
    agent.handle("demo_leader", "zebra quantum marmalade", turn_key="g:2")
    prompts = [c[1][-1][1] for c in llm.calls if c[0] == "executor"]
    assert ["Sender's profile:" in p for p in prompts] == [guide_profile == "always", True]
    assert all("Guide excerpts:" in p for p in prompts)
    assert llm.pending() == {}


def test_a_guide_answer_citing_no_excerpt_without_the_profile_is_no_answer(engine, router):  # noqa: F811
    from tests.unit.pipeline_support import to_guide

    agent, llm = make_agent(engine, router=router)
    llm.enqueue("executor", {"source": 0, "answer": "Yes, the upload page takes sheets in any format."})
    res = agent.handle("demo_leader", "how do i upload sheets", turn_key="g:1")  # the router is sure: guide
    assert res.route == "guide" and "couldn't find an answer" in res.reply and "any format" not in res.reply
    assert [c[0] for c in llm.calls] == ["executor"]  # nothing to verify: no verifier call, no second attempt
    # shown the profile (the router unsure), an answer citing no excerpt may come from it: it is verified
    to_guide(llm)
    llm.enqueue("executor", {"source": 0, "answer": "You are a team leader."}).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "zebra quantum marmalade", turn_key="g:2")
    assert res.reply == "You are a team leader."
    # ... but one that says nothing the profile holds comes from the model's own knowledge: no answer.
    to_guide(llm)
    llm.enqueue("executor", {"source": 0, "answer": "Leonardo da Vinci painted the Mona Lisa."})
    res = agent.handle("demo_leader", "Who painted the Mona Lisa?", turn_key="g:3")
    assert "couldn't find an answer" in res.reply and "Leonardo" not in res.reply
    assert llm.pending() == {}


def test_a_profile_answers_verifier_reads_the_lines_the_message_and_answer_are_about():
    from chops.pipeline.verifier import related_lines

    profile = "Name: Ann Lee (nickname ann)\nRole: marker (not team leader)\nUpload limit: 40\nSchool: Hillside"
    assert related_lines(profile, ["Am I a team leader?", "No, you are a marker."]) == \
        "Role: marker (not team leader)"
    assert related_lines(profile, ["how high is my limit", "Your upload limit is 40."]) == "Upload limit: 40"
    assert related_lines(profile, ["我的上传上限是多少？", "40"]) is None  # no shared word: the whole profile


@pytest.mark.parametrize("verifier_profile", ["related", "all"])
def test_the_verifier_prompt_holds_only_the_related_profile_lines(engine, verifier_profile):
    agent, llm = make_agent(engine, verifier_profile=verifier_profile)
    to_profile(llm)
    llm.enqueue("executor", {"answer": "Your upload limit is 40."}).enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "What is my upload limit?", turn_key="p:1")
    assert res.reply.startswith("Your upload limit is 40.")
    prompt = [c[1][-1][1] for c in llm.calls if c[0] == "verifier"][0]
    assert "Upload limit:" in prompt
    assert ("School:" in prompt) == (verifier_profile == "all")  # a line the question is not about
    assert llm.pending() == {}


def test_a_guide_answer_stating_a_number_its_excerpt_does_not_hold_is_redone_without_the_verifier(sqlite_url):
    from chops.domain.outcomes import OperationResult, Outcome
    from chops.pipeline.context import Candidate, Step
    from chops.pipeline.verifier import invented_numbers
    from tests.unit.pipeline_support import FakeIndex, GUIDE_CHUNKS, make_agent, to_guide

    agent, llm = make_agent(demo_engine(sqlite_url), index=FakeIndex([GUIDE_CHUNKS[0].__class__(
        file="user-guide.pdf", page=4, text="Each school may upload 40 sheets a day, at most 2,500 in all.")]))
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": "You may upload $1,250.00 worth of sheets."})  # made up
    to_guide(llm, fresh=False)
    llm.enqueue("executor", {"source": 1, "answer": "40 sheets a day, 2500 in all, for your 3 exams."})
    llm.enqueue("verifier", verdict(9))
    res = agent.handle("demo_leader", "How many sheets can we upload?", turn_key="n:1")
    assert res.reply.startswith("40 sheets a day") and res.iterations == 2 and llm.pending() == {}
    first = next(s for s in res.trace["steps"] if s["role"] == "verifier")
    assert first["deterministic"] and first["invented"] == ["1,250.00"]  # no verifier call for it
    # The look-ups' results count as given; a small count is the answer's own; an operation is not an answer.
    ctx = type("Ctx", (), {"text": "how much did the lamp cost?", "user_texts": ["how much did the lamp cost?"],
                           "profile_text": lambda self: "",
                           "done": lambda self: []})()
    read = Step(operation="GetOrder", proposed_args={}, args={}, result=OperationResult(
        operation="GetOrder", outcome=Outcome.OK, message="", data={"items": [{"name": "Lamp", "price": 45.5}]}))
    lamp = Candidate(iteration=1, route="system", answer="The lamp was $45.50, 2 of them: $91.00.", lookups=[read])
    assert invented_numbers(ctx, lamp) == ["91.00"]  # a sum the model made: computed with a look-up, it is given
    assert invented_numbers(ctx, Candidate(iteration=1, route="system", answer="ok", steps=[read])) == []
    # What the conversation's changes did counts as given: "you get $91.00 back" after they said so.
    ctx.done = lambda: ["Return of 2 item(s) requested; $91.00 will be refunded to paypal_1."]
    assert invented_numbers(ctx, lamp) == []
    # A small number in a unit the look-ups measure in, at a value they never have with it, is no count of the answer's.
    kettle = Step(operation="GetOrder", proposed_args={}, args={}, result=OperationResult(
        operation="GetOrder", outcome=Outcome.OK, message="", data={"items": [
            {"name": "Kettle", "price": 45.5, "options": {"capacity": "12 cups", "power": "1500W"}}]}))
    said = lambda answer: invented_numbers(ctx, Candidate(iteration=1, route="system", answer=answer,  # noqa: E731
                                                          lookups=[kettle]))
    assert said("Your kettle holds 2 cups and is 1500W; you paid $45.50 for it.") == ["2 cups"]
    assert said("Your kettle holds 12 cups, 1500W; $45.50 to your card, 2 of them.") == []


def test_an_answer_that_only_ever_states_made_up_numbers_is_never_sent(sqlite_url):
    from tests.unit.pipeline_support import FakeIndex, GUIDE_CHUNKS, to_guide

    agent, llm = make_agent(demo_engine(sqlite_url), index=FakeIndex([GUIDE_CHUNKS[0].__class__(
        file="user-guide.pdf", page=4, text="Each school may upload 40 sheets a day.")]))
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": "You get $60.78 back."})
    to_guide(llm, fresh=False)
    llm.enqueue("executor", {"source": 1, "answer": "You get $60.78 back."})  # the same: the loop stops
    res = agent.handle("demo_leader", "How much do I get back?", turn_key="n:1")
    assert "60.78" not in res.reply and "couldn't find an answer" in res.reply
    assert res.trace["unanswered"] and llm.pending() == {}


def test_an_answer_that_only_says_the_message_back_is_redone_without_the_verifier(engine):
    from chops.pipeline.verifier import echoed

    agent, llm = make_agent(engine, verifier_reason="on_fail")
    to_profile(llm)
    llm.enqueue("executor", {"answer": "I have no preference for the colour."})  # the customer's words
    to_profile(llm, fresh=False)
    llm.enqueue("executor", {"answer": "Noted. Is there anything else I can help with?"})
    llm.enqueue("verifier", {"score": 9})
    res = agent.handle("demo_busy_leader", "Fine. I have no preference for the colour.", turn_key="e:1")
    assert res.reply.startswith("Noted.") and res.iterations == 2 and llm.pending() == {}
    first = verifier_steps(res)[0]
    assert first["deterministic"] and first["echoed"] and first["score"] == 1
    assert "only says the customer's own words back" in next(c for c in llm.calls if c[0] == "executor"
                                                             and "rejected" in c[1][-1][1])[1][-1][1]
    # A short reply, or one that says more than the message, is no echo.
    assert not echoed("Yes, thanks.", "Yes, thanks.") and not echoed("No colour preference", None)
    assert not echoed("I have no preference.", "You have no preference; I'll pick the black one.")
