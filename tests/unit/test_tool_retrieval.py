"""Tool retrieval (chops.pipeline.tools): operations ranked by embedding against the message and the one before
it, the look-ups a short list needs kept in it, the plan schema narrowed to the list, the two prompt layouts,
and with ``tool_top_k`` 0 the very prompts and schema of before."""

from __future__ import annotations

import dataclasses
from string import Template
from typing import Any

import pytest
from pydantic import ValidationError

from apis.cphos.pack import pack as cphos_pack
from apis.cphos.registry import OPERATIONS
from chops.bootstrap import build_agent
from chops.domain.operations import operation_lines
from chops.llm import ScriptedLLM
from chops.pipeline.schemas import plan_schema
from chops.pipeline.tools import ToolRanker, operation_text
from chops.pipeline.walk import records
from chops.records import TurnRecord
from chops.settings import get_settings
from chops.store import ConversationStore
from tests.unit.pipeline_support import FakeIndex, WordsEmbedder, call, demo_engine, make_agent, to_system, verdict
from tests.unit.shop_fake import OPERATIONS as SHOP

UPLOAD = "ChangeAllTypesUploadLimit"


class CountingEmbedder(WordsEmbedder):
    """``WordsEmbedder`` that remembers every batch it embedded."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed(self, texts: list[str]):
        self.batches.append(list(texts))
        return super().embed(texts)


@pytest.fixture
def engine(sqlite_url):
    return demo_engine(sqlite_url)


def offered(schema) -> set[str]:
    """The operation names a plan schema lets the model write."""
    found: set[str] = set()
    for node in records(schema.model_json_schema()):
        op = (node.get("properties") or {}).get("operation")
        if isinstance(op, dict):
            found.update([op["const"]] if "const" in op else op.get("enum", []))
    return found


def executor_calls(llm: ScriptedLLM) -> list[tuple[str, list, Any]]:
    return [c for c in llm.calls if c[0] == "executor"]


def upload_turn(agent, llm, text: str = "Please change my upload limit to 40", history=()):
    to_system(llm)
    llm.enqueue("executor", call(UPLOAD, Limit=40))
    llm.enqueue("verifier", verdict(9))
    return agent.handle("demo_leader", text, history=list(history), turn_key="c:1")


def test_operations_are_ranked_by_their_words_and_embedded_once():
    embedder = CountingEmbedder()
    ranker = ToolRanker(OPERATIONS, embedder, top_k=2)
    assert operation_text(OPERATIONS[UPLOAD]).startswith("change all types upload limit: ")
    assert operation_text(SHOP["GetOrder"]).startswith("get order: ")
    assert ranker.rank("please change my upload limit to 40").names[0] == UPLOAD
    assert ranker.rank("make me an arbiter").names[0] == "MakeAllTypesToBeArbiter"
    short = ranker.shortlist("please raise my upload limit, I mark problem 4 so change my marking subject too")
    assert set(short) == {UPLOAD, "ChangeAllTypesMarkingSubject"}
    assert list(short) == [n for n in OPERATIONS if n in short]  # registry order, as the full list reads
    # The registry was embedded once; each ranking embedded only its message.
    assert sorted(len(b) for b in embedder.batches) == [1, 1, 1, len(OPERATIONS)]


def test_a_short_list_keeps_the_look_ups_its_operations_need():
    shop = {**SHOP, "Exchange": dataclasses.replace(SHOP["Exchange"], needs=("GetVariants",)),
            "GetVariants": dataclasses.replace(SHOP["GetVariants"], needs=("GetOrder",))}
    ranker = ToolRanker(shop, WordsEmbedder(), top_k=1)
    assert ranker.rank("exchange my delivered lamp for another variant").names[0] == "Exchange"
    # The exchange's item ids come from GetVariants, whose item id comes from GetOrder: all three are kept.
    assert ranker.shortlist("exchange my delivered lamp for another variant") == ("GetOrder", "GetVariants",
                                                                                  "Exchange")
    with pytest.raises(ValueError, match="GetOrderz"):
        ToolRanker({**shop, "Exchange": dataclasses.replace(SHOP["Exchange"], needs=("GetOrderz",))},
                   WordsEmbedder(), top_k=1)


def test_a_follow_up_is_ranked_with_the_users_message_before_it():
    ranker = ToolRanker(OPERATIONS, WordsEmbedder(), top_k=1)
    assert ranker.shortlist("it is 40") != (UPLOAD,)  # no word of any operation: nothing to go by
    assert ranker.shortlist("it is 40", previous="I want a higher upload limit") == (UPLOAD,)
    # The message itself still counts more than the one before it: a new request is not pulled back.
    assert ranker.shortlist("make me an arbiter", previous="I want a higher upload limit") == (
        "MakeAllTypesToBeArbiter",)


def test_the_executor_ranks_a_follow_up_with_the_previous_user_message(engine):
    agent, llm = make_agent(engine, tools=ToolRanker(OPERATIONS, WordsEmbedder(), top_k=1))
    history = [TurnRecord(seq=1, user_text="I want a higher upload limit", reply="What should it be?",
                          route="system", operation=UPLOAD, outcome="refused_missing_args")]
    res = upload_turn(agent, llm, "it is 40", history)
    assert res.committed
    assert next(s for s in res.trace["steps"] if s["role"] == "tools")["shortlist"] == [UPLOAD]


def test_tool_top_k_0_sends_the_prompts_and_schema_of_before_byte_for_byte(engine):
    """k 0 (the default) is no ranker at all: the bootstrap builds none, whatever the layout says, and the
    executor's prompt is the prompt file as it was before the short-list placeholder, filled as before."""
    settings = get_settings(tool_top_k=0, tool_layout="inline")
    api = cphos_pack.api(engine)
    llm = ScriptedLLM()
    agent = build_agent(settings, cphos_pack, api, llm, FakeIndex(), engine=engine,
                        approvals=ConversationStore(engine, api=api), router=False)
    assert agent.executor.tools is None
    assert make_agent(engine, tools=ToolRanker(OPERATIONS, WordsEmbedder(), top_k=0))[0].executor.tools is None
    text = "Please change my upload limit to 40"
    upload_turn(agent, llm, text)
    (_, msgs, schema), = executor_calls(llm)
    before = (cphos_pack.prompts / "pipeline_execute_system.txt").read_text("utf-8").replace("${shortlist}", "")
    system, user = before.split("---USER---", 1)
    assert msgs == [("system", Template(system.strip()).substitute(operations="\n".join(operation_lines(OPERATIONS)))),
                    ("user", Template(user.strip("\n")).substitute(history="", feedback="", demonstrations="",
                                                                     request=text, observations=""))]
    assert schema.model_json_schema() == plan_schema(tuple(OPERATIONS.values()), with_answer=False).model_json_schema()
    assert ("executor", msgs[0][1]) in agent.static_heads()  # and a warm start caches that same head


def test_the_cached_layout_narrows_only_the_schema(engine):
    plain, plain_llm = make_agent(engine)
    upload_turn(plain, plain_llm)
    agent, llm = make_agent(engine, tools=ToolRanker(OPERATIONS, WordsEmbedder(), top_k=1), tool_layout="cached")
    res = upload_turn(agent, llm)
    assert res.committed
    (_, msgs, schema), = executor_calls(llm)
    assert msgs == executor_calls(plain_llm)[0][1]  # the same bytes: the cached head stays the engine's cache hit
    assert offered(schema) == {UPLOAD} and offered(executor_calls(plain_llm)[0][2]) == set(OPERATIONS)
    with pytest.raises(ValidationError):  # an operation off the list cannot be written
        schema.model_validate(call("MakeAllTypesToBeArbiter"))
    assert agent.static_heads() == plain.static_heads()


def test_the_inline_layout_lists_the_short_list_in_the_user_part_only(engine):
    agent, llm = make_agent(engine, tools=ToolRanker(OPERATIONS, WordsEmbedder(), top_k=2), tool_layout="inline")
    upload_turn(agent, llm, "Please change my upload limit to 40 and my marking subject")
    (_, [(_, system), (_, user)], schema), = executor_calls(llm)
    listed = {UPLOAD, "ChangeAllTypesMarkingSubject"}
    lines = dict(zip(OPERATIONS, operation_lines(OPERATIONS), strict=True))
    assert not any(line in system for line in lines.values())  # the head names no operation's signature
    assert user.startswith("Operations:\n") and all(lines[n] in user for n in listed)
    assert not any(lines[n] in user for n in set(OPERATIONS) - listed)
    assert offered(schema) == listed
    assert ("executor", system) in agent.static_heads()  # the head without the list is what gets warmed


def test_the_bootstrap_reuses_the_loaded_embedder(engine):
    index = FakeIndex()
    api = cphos_pack.api(engine)
    agent = build_agent(get_settings(tool_top_k=3), cphos_pack, api, ScriptedLLM(), index, engine=engine,
                        approvals=ConversationStore(engine, api=api), router=False)
    assert agent.executor.tools.embedder is index.embedder and agent.executor.tools.top_k == 3
