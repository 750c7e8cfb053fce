"""The real model's answer verifier: an answer from the profile never passes for a request to change
something (only an operation can change it; a cheap model's classifier sends such requests to the
profile and its executor then writes "You now grade problem 9"), while a right answer to a question
about the profile, or a how-to answer from a guide, still passes. Our own wordings, English and Chinese."""

from __future__ import annotations

import pytest

from apis.cphos.pack import pack as cphos_pack
from apis.cphos.service import Api
from chops.pipeline.context import Candidate, TurnContext
from chops.pipeline.prompting import pack_prompts
from chops.pipeline.trace import Trace
from chops.pipeline.verifier import Verifier
from chops.retrieval.ingest import Chunk
from chops.settings import get_settings
from tests.unit.pipeline_support import demo_engine

pytestmark = pytest.mark.local_model

HOW_TO = Chunk(file="marking.pdf", page=2, text="To mark a different problem, open Settings, choose Marking "
               "subject and select the problem number. The change applies from the next batch.")

# (message, route, answer, should pass)
CASES = [
    ("Switch me to grading problem 7 please.", "basic_info", "You now grade problem 7.", False),
    ("I'd like my upload cap raised to 60.", "basic_info", "Your upload limit is 60 answer sheets.", False),
    ("Put me down as a team leader.", "basic_info", "You are a team leader.", False),
    ("请把我的批改题号改成3", "basic_info", "你的批改题号已改为3。", False),
    ("Could you make me an arbiter?", "basic_info", "You are not an arbiter.", False),
    ("Which problem am I grading at the moment?", "basic_info", "You grade problem {subject}.", True),
    ("What's my upload limit?", "basic_info", "Your upload limit is {limit} answer sheets.", True),
    ("我现在批改第几题？", "basic_info", "你现在批改第{subject}题。", True),
    ("How do I switch to marking another problem?", "guide",
     "Open Settings, choose Marking subject and select the problem number.", True),
]


@pytest.fixture(scope="module")
def verdicts(local_llm, tmp_path_factory):
    engine = demo_engine(f"sqlite:///{tmp_path_factory.mktemp('verifier') / 'chops.db'}")
    profile = Api(engine).profile("demo_leader")
    verifier = Verifier(local_llm, get_settings())
    out = []
    with pack_prompts(cphos_pack.prompts):  # CPHOS's own rubric examples, as an Agent of the pack would use
        for text, route, answer, should_pass in CASES:
            trace = Trace()
            trace.iteration = 1
            ctx = TurnContext(nickname="demo_leader", text=text, profile=profile, history=[], trace=trace)
            cand = Candidate(iteration=1, route=route, source=HOW_TO if route == "guide" else None,
                             answer=answer.format(subject=profile.subject, limit=profile.limit))
            out.append((text, should_pass, verifier.verify(ctx, cand), cand.score, cand.reason))
    return out


def test_a_profile_answer_never_passes_for_a_request_to_change_something(verdicts):
    wrong = [(text, score, reason) for text, should_pass, passed, score, reason in verdicts
             if not should_pass and passed]
    assert wrong == []


def test_right_answers_to_questions_still_pass(verdicts):
    wrong = [(text, score, reason) for text, should_pass, passed, score, reason in verdicts
             if should_pass and not passed]
    assert wrong == []
