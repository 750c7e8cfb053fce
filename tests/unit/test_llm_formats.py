"""Schema → provider response formats, and the real local model staying off in unmarked tests."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from chops.llm import LLMError, build_llm
from chops.llm.chat import Endpoint, response_format, to_langchain
from chops.settings import get_settings


class Inner(BaseModel):
    name: str


class AllRequired(BaseModel):
    op: Literal["A", "B"]
    inner: Inner


class WithDefault(BaseModel):
    op: Literal["A", "B"]
    limit: int | None = Field(default=None, ge=0)


def test_json_schema_format_closes_objects_and_is_strict_only_when_all_required():
    fmt = response_format(AllRequired)
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    body = fmt["json_schema"]["schema"]
    assert body["additionalProperties"] is False and body["$defs"]["Inner"]["additionalProperties"] is False
    assert body["properties"]["op"]["enum"] == ["A", "B"]
    assert response_format(WithDefault)["json_schema"]["strict"] is False
    assert "additionalProperties" not in AllRequired.model_json_schema()  # the model's own schema is untouched


def test_llama_cpp_endpoint_gets_a_compact_json_grammar_of_the_same_schema():
    import json

    ep = Endpoint(base_url="http://127.0.0.1:1/v1", api_key="k", llama_cpp=True, extra_body={"cache_prompt": True})
    fields = ep.structure(AllRequired)
    assert set(fields) == {"extra_body"} and fields["extra_body"]["cache_prompt"] is True
    grammar = fields["extra_body"]["grammar"]  # llama.cpp's GBNF of the schema
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines() if " ::= " in line)
    assert rules["space"] == '""'  # no optional whitespace: compact JSON
    assert "root" in rules and '"\\"A\\""' in grammar and '"\\"B\\""' in grammar  # the enum's two values
    assert "additional" not in grammar  # closed: no other keys
    plain = Endpoint(base_url=None, api_key="k").structure(AllRequired)
    assert plain == {"response_format": response_format(AllRequired)}  # OpenAI & co: the standard field


def test_messages_become_langchain_messages():
    msgs = to_langchain([("system", "s"), ("user", "u"), ("assistant", "a")])
    assert [(m.type, m.content) for m in msgs] == [("system", "s"), ("human", "u"), ("ai", "a")]


def test_real_local_model_is_off_in_unmarked_tests(tmp_path):
    llm = build_llm(get_settings(data_dir=tmp_path))
    with pytest.raises(LLMError) as err:
        llm.text("executor", [("user", "hi")])
    assert err.value.code == "disabled"
    assert llm.ledger.records[0].error == "disabled"


def test_missing_model_file_is_not_installed(tmp_path, monkeypatch):
    from chops.llm import engine

    monkeypatch.setattr(engine, "LOAD_ALLOWED", True)
    llm = build_llm(get_settings(data_dir=tmp_path, local_model_path=tmp_path / "nope.gguf"))
    with pytest.raises(LLMError) as err:
        llm.structured("classifier", [("user", "hi")], WithDefault)
    assert err.value.code == "not_installed" and "chops model install" in str(err.value)


def test_a_one_field_choice_keeps_the_standard_format_on_llama_cpp_too():
    class Route(BaseModel):
        route: Literal["own_fact", "something_else"]

    ep = Endpoint(base_url="http://127.0.0.1:1/v1", api_key="k", llama_cpp=True)
    assert ep.structure(Route) == {"response_format": response_format(Route)}
    assert 'space ::= ""' in ep.structure(WithDefault)["extra_body"]["grammar"]  # not one required enum: compact JSON


def test_every_schema_the_agent_sends_converts_to_a_compact_grammar():
    # llama.cpp's converter rejects what it cannot decode (``items: false`` beside ``prefixItems`` did): a schema it
    # refuses would fail every call of its kind on the embedded engine, so each one the pipeline builds is tried.
    from apis.cphos.registry import OPERATIONS as CPHOS
    from apis.retail.registry import OPERATIONS as RETAIL
    from chops.pipeline import schemas as s
    from chops.pipeline.choices import arg_options
    from chops.pipeline.confirm import ConfirmationAnswer
    from eval.grading import JudgeVerdict

    shop = tuple(RETAIL.values())
    order = {"order_id": "#W0000001", "status": "delivered",
             "items": [{"item_id": "11", "product_id": "p1", "name": "Table Lamp"},
                       {"item_id": "12", "product_id": "p2", "name": "Coffee Kettle"}]}
    products = [{"product_id": "p1", "name": "Table Lamp", "variants": {"13": "white; $9.00; available"}},
                {"product_id": "p2", "name": "Coffee Kettle", "variants": {"14": "blue; $5.00; available"}}]
    options = arg_options(shop, [{"orders": ["#W0000001"]}, order, *products], ["#W0000009"], "the lamp and the kettle")
    assert any(groups for *_, groups in options)  # a one-each union of tuples is among them
    schemas = [s.Level1Decision, s.SmallTalkGate, s.ConversationKind, s.Level2Decision, s.OneLevelDecision,
               s.ProfileAnswer, s.GuideAnswer, s.Verdict, s.Score, s.Choice, ConfirmationAnswer, JudgeVerdict,
               s.plan_schema(tuple(CPHOS.values())), s.proposal_schema(tuple(CPHOS.values()), with_answer=True),
               s.plan_schema(shop, True), s.plan_schema(shop, True, options)]
    ep = Endpoint(base_url="http://127.0.0.1:1/v1", api_key="k", llama_cpp=True)
    for schema in schemas:
        fields = ep.structure(schema)
        assert "response_format" in fields or 'space ::= ""' in fields["extra_body"]["grammar"], schema
