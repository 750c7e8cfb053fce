"""The embedding router (chops.router): trained from labelled examples, sure or not, cached on disk, and
deciding routes in the classifier without a model call only when it may."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from chops import router as router_module
from chops.router import (KIT_EXAMPLES, MIN_THRESHOLD, ROUTES, Router, artefact_path, build_router, read_examples,
                          training_examples)
from tests.unit.pipeline_support import demo_engine, make_agent, verdict

REPO = Path(__file__).resolve().parents[2]

# Made-up messages per route, with words of their own, so that a bag-of-words embedder separates them.
EXAMPLES = {
    "greeting": ["hello there", "hi hello", "hello good morning", "hi there hello", "good morning hi"],
    "thanks": ["thanks a lot", "thank you thanks", "many thanks bye", "thanks bye", "thank you bye"],
    "cancel": ["cancel that", "never mind cancel", "cancel forget it", "forget it never mind", "cancel never mind"],
    "handoff": ["human agent please", "a human please", "agent human now", "real human agent", "human person agent"],
    "out_of_scope": ["weather rain tomorrow", "joke poem weather", "rain weather sunny", "poem joke please",
                     "sunny weather joke"],
    "basic_info": ["what is my limit", "my limit now what", "what is my role", "my role what is",
                   "my school what is"],
    "guide": ["how do i upload sheets", "how to upload", "how do i appeal", "how upload sheets works",
              "how to appeal deadline"],
    "system": ["set my limit to 40", "change my limit to 60", "set my school to x", "change my role to arbiter",
               "set change my limit"],
}


class BagOfWords:
    """A deterministic stand-in for USE: hashed word counts, unit length (``.name`` and ``.embed``)."""

    name = "bag-of-words-64"

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), 64))
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def examples_file(tmp_path: Path, extra: list[tuple[str, str]] = ()) -> Path:
    path = tmp_path / "examples.jsonl"
    rows = [(text, route) for route, texts in EXAMPLES.items() for text in texts] + list(extra)
    path.write_text("".join(json.dumps({"text": t, "route": r}) + "\n" for t, r in rows), encoding="utf-8")
    return path


@pytest.fixture
def router(tmp_path) -> Router:
    return Router.train(read_examples(examples_file(tmp_path)), BagOfWords())


def test_the_router_is_sure_of_clear_messages_and_unsure_of_strange_ones(router):
    assert router.threshold >= MIN_THRESHOLD
    for text, route in [("hello", "greeting"), ("thanks, bye", "thanks"), ("set my limit to 55", "system"),
                        ("how do I upload?", "guide"), ("a human agent", "handoff")]:
        decision = router.decide(text)
        assert (decision.route, decision.sure) == (route, True), text
    assert not router.decide("zebra quantum marmalade").sure  # no word it knows: the model must decide


def test_a_trained_router_is_kept_and_rebuilt_only_when_the_examples_change(tmp_path):
    embedder = BagOfWords()
    path = examples_file(tmp_path)
    first = build_router(tmp_path / "data", path, embedder)
    calls = embedder.calls
    again = build_router(tmp_path / "data", path, embedder)  # loaded from disk, not trained again
    assert embedder.calls == calls and again.threshold == first.threshold
    assert np.allclose(again.weights, first.weights)
    changed = examples_file(tmp_path, [("hey hello hi", "greeting")])
    assert artefact_path(tmp_path / "data", changed, embedder.name) != artefact_path(tmp_path / "data", path, "x")
    build_router(tmp_path / "data", changed, embedder)
    assert embedder.calls > calls  # the new examples were trained on
    assert len(list((tmp_path / "data" / "router").glob("router-*.npz"))) == 2


def test_an_unknown_route_in_the_examples_is_refused(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"text": "hi", "route": "chitchat"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown route 'chitchat'"):
        read_examples(bad)


def test_a_sure_router_decides_without_any_model_call(sqlite_url, router):
    agent, llm = make_agent(demo_engine(sqlite_url), router=router)
    llm.enqueue("executor", {"answer": "Your upload limit is 30."}).enqueue("verifier", verdict(9))
    result = agent.handle("demo_leader", "what is my limit", turn_key="t:1")
    assert result.route == "basic_info"
    assert [c["role"] for c in result.trace["ledger"]] == ["executor", "verifier"]  # no classifier call
    classify = next(e for e in result.trace["events"] if e["kind"] == "classify")
    assert classify["by"] == "router" and classify["confidence"] >= router.threshold


def test_a_conversational_route_from_the_router_needs_no_model_at_all(sqlite_url, router):
    agent, llm = make_agent(demo_engine(sqlite_url), router=router)
    result = agent.handle("demo_leader", "thanks, bye", turn_key="t:1")
    assert result.route == "thanks" and result.trace["ledger"] == []


def test_an_unsure_router_leaves_the_route_to_the_model(sqlite_url, router):
    from tests.unit.pipeline_support import to_profile

    agent, llm = make_agent(demo_engine(sqlite_url), router=router)
    to_profile(llm)
    llm.enqueue("executor", {"answer": "You are a team leader."}).enqueue("verifier", verdict(9))
    result = agent.handle("demo_leader", "zebra quantum marmalade", turn_key="t:1")
    assert result.route == "basic_info"
    classify = next(e for e in result.trace["events"] if e["kind"] == "classify")
    assert classify["by"] == "model" and classify["confidence"] < router.threshold


def test_an_answer_to_a_question_for_a_missing_value_goes_to_the_model(sqlite_url, router):
    from chops.records import TurnRecord
    from tests.unit.pipeline_support import call, to_system

    agent, llm = make_agent(demo_engine(sqlite_url), router=router)
    asked = TurnRecord(user_text="change my limit", reply="To what?", route="system",
                       operation="ChangeAllTypesUploadLimit", outcome="refused_missing_args")
    to_system(llm)  # "hello there" alone is a greeting; after "to what?" only the model may say
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=None)).enqueue("verifier", verdict(9))
    result = agent.handle("demo_leader", "hello there", history=[asked], turn_key="t:2")
    assert not any(s["role"] == "router" for s in result.trace["steps"])
    assert result.route == "system"


def test_the_domain_examples_cover_every_route_in_english_and_chinese():
    rows = training_examples(REPO / "apis" / "cphos" / "router_examples.jsonl")  # the kit's and the pack's
    han = re.compile(r"[\u4e00-\u9fff]")
    for route in ROUTES:
        texts = [t for t, r in rows if r == route]
        assert len(texts) >= 15, route
        assert any(han.search(t) for t in texts) and any(not han.search(t) for t in texts), route
    assert len({t for t, _ in rows}) == len(rows)  # no duplicates
    manners = {c["text"] for c in json.loads((REPO / "eval" / "cases" / "manners.json").read_text())["cases"]}
    assert not manners & {t for t, _ in rows}  # the evaluation's own messages are never training examples


CONVERSATIONAL = ("greeting", "thanks", "cancel", "handoff", "out_of_scope")


def test_the_kits_examples_are_conversational_in_english_and_chinese_and_the_packs_do_not_repeat_them():
    kit = read_examples(KIT_EXAMPLES)
    han = re.compile(r"[\u4e00-\u9fff]")
    assert {r for _, r in kit} == set(CONVERSATIONAL)  # no business's profile, guide or operation
    for route in CONVERSATIONAL:
        texts = [t for t, r in kit if r == route]
        assert len(texts) >= 25, route  # as many as a pack had of its own before they moved here
        assert any(han.search(t) for t in texts) and any(t.isascii() for t in texts), route
    folded = [" ".join(t.split()).casefold() for t, _ in kit]
    assert len(set(folded)) == len(folded)
    manners = {c["text"].casefold() for c in
               json.loads((REPO / "eval" / "cases" / "manners.json").read_text())["cases"]}
    assert not manners & set(folded)  # the evaluation's own messages are never training examples
    for pack in ("cphos", "retail"):
        own = read_examples(REPO / "apis" / pack / "router_examples.jsonl")
        assert not {" ".join(t.split()).casefold() for t, _ in own} & set(folded), pack
        assert sum(r in CONVERSATIONAL for _, r in own) <= 6, pack  # only wordings that name its business


def test_a_packs_label_of_a_kit_wording_wins_and_the_wording_is_trained_on_once(tmp_path):
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"text": "Tell me a  joke", "route": "system"}) + "\n", encoding="utf-8")
    rows = training_examples(own)
    assert [r for t, r in rows if t.casefold().split() == ["tell", "me", "a", "joke"]] == ["system"]
    assert len(rows) == len(read_examples(KIT_EXAMPLES))  # the kit's wording replaced, nothing added
    assert training_examples(KIT_EXAMPLES) == read_examples(KIT_EXAMPLES)


def test_the_trained_router_is_named_by_the_kits_examples_too(tmp_path, monkeypatch):
    path = examples_file(tmp_path)
    kit = tmp_path / "kit.jsonl"
    kit.write_bytes(KIT_EXAMPLES.read_bytes())
    monkeypatch.setattr(router_module, "KIT_EXAMPLES", kit)
    before = artefact_path(tmp_path, path, "e")
    kit.write_text(kit.read_text(encoding="utf-8") + json.dumps({"text": "howdy", "route": "greeting"}) + "\n",
                   encoding="utf-8")
    assert artefact_path(tmp_path, path, "e") != before  # a changed kit trains the router again
    embedder = BagOfWords()
    build_router(tmp_path / "data", path, embedder)
    assert embedder.calls > 0


def test_thanks_after_a_finished_change_is_thanks_not_the_change_again(sqlite_url, router):
    from chops.records import TurnRecord
    from tests.unit.pipeline_support import db_snapshot

    engine = demo_engine(sqlite_url)
    agent, llm = make_agent(engine, router=router)
    done = TurnRecord(user_text="set my limit to 40", reply="Your upload limit is now 40.", route="system",
                      operation="ChangeAllTypesUploadLimit", args={"Limit": 40}, outcome="ok", committed=True)
    before = db_snapshot(engine)
    result = agent.handle("demo_leader", "thanks a lot", history=[done], turn_key="t:2")
    assert result.route == "thanks" and result.trace["ledger"] == [] and db_snapshot(engine) == before
