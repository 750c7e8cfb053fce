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
    head, _, schema = fields["extra_body"]["grammar"].partition("start: %json ")
    assert head.startswith("%llguidance")
    body = json.loads(schema)
    assert body["x-guidance"]["whitespace_flexible"] is False
    assert body["properties"]["op"]["enum"] == ["A", "B"] and body["additionalProperties"] is False
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
    assert "%json" in ep.structure(WithDefault)["extra_body"]["grammar"]  # not one required enum: compact JSON
