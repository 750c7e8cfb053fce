"""Deterministic grounding of argument values, and the structured-output schemas."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import ValidationError

from apis.cphos.registry import OPERATIONS
from chops.pipeline.grounding import ground_args, numbers_in
from chops.pipeline.schemas import proposal_schema


def test_numbers_are_found_as_tokens_not_as_parts_of_other_numbers():
    assert numbers_in("set it to 40 please") == {40}
    assert 4 not in numbers_in("set it to 40") and 0 not in numbers_in("40")
    assert numbers_in("problem seven, not 3.5") >= {7}
    assert numbers_in("v2 of the form") == {2}


@pytest.mark.parametrize(("args", "texts", "expected", "dropped"), [
    ({"Limit": 40}, ["Please raise my limit to 40."], {"Limit": 40}, []),
    ({"Limit": 4}, ["Please raise my limit to 40."], {"Limit": None}, ["Limit"]),
    ({"SubjectIndex": 9}, ["I'd like to mark problem nine"], {"SubjectIndex": 9}, []),
    ({"SubjectIndex": None}, ["change my problem"], {"SubjectIndex": None}, []),
    ({"SchoolName": "riverside school"}, ["Move me to Riverside School"], {"SchoolName": "Riverside School"}, []),
    ({"SchoolName": "Riverside School."}, ["Move me to Riverside School"], {"SchoolName": "Riverside School"}, []),
    ({"SchoolName": "Hill Valley College"}, ["Move me to another school"], {"SchoolName": None}, ["SchoolName"]),
    ({"TeamLeaderName": "  "}, ["Make me a vice"], {"TeamLeaderName": None}, []),
    ({"Limit": True}, ["limit 1"], {"Limit": None}, ["Limit"]),
])
def test_ground_args(args, texts, expected, dropped):
    assert ground_args(args, texts) == (expected, dropped)


def test_grounding_searches_every_user_message_of_the_conversation():
    texts = ["and the area is Lakeside", "Please add a school called Bayview Prep"]
    args = {"SchoolName": "Bayview Prep", "AreaName": "Lakeside"}
    assert ground_args(args, texts) == (args, [])


def test_proposal_schema_allows_only_registry_operations_and_their_own_arguments():
    schema = proposal_schema(tuple(OPERATIONS.values()))
    ok = schema.model_validate({"call": {"operation": "ChangeAllTypesUploadLimit", "args": {"Limit": None}}})
    assert ok.call.args.model_dump(by_alias=True) == {"Limit": None}
    noargs = schema.model_validate({"call": {"operation": "MakeAllTypesToBeArbiter", "args": {}}})
    assert noargs.call.args.model_dump(by_alias=True) == {}
    for bad in ({"operation": "DropTables", "args": {}},
                {"operation": "ChangeAllTypesUploadLimit", "args": {"SubjectIndex": 3}},
                {"operation": "ChangeAllTypesUploadLimit", "args": {}},  # null must be explicit
                {"operation": "MakeAllTypesToBeArbiter", "args": {"nickname": "someone"}}):
        with pytest.raises(ValidationError):
            schema.model_validate({"call": bad})
    text = str(schema.model_json_schema())
    assert all(name in text for name in OPERATIONS)
    for op in OPERATIONS.values():  # every argument is described for the model
        for field in op.args_model.model_fields.values():
            assert field.description and field.description in text


def test_executor_only_schema_has_the_answer_branch():
    schema = proposal_schema(tuple(OPERATIONS.values()), with_answer=True)
    out = schema.model_validate({"call": {"operation": "AnswerDirectly", "answer": "Hello"}})
    assert out.call.answer == "Hello"


def test_a_list_argument_stays_a_list_of_plain_strings_in_the_plan_schema():
    from pydantic import BaseModel, ConfigDict, Field

    from chops.domain.operations import Operation
    from chops.pipeline.schemas import plan_schema

    class SwapArgs(BaseModel):
        """A made-up shop's swap: list arguments whose items carry a length bound."""

        model_config = ConfigDict(extra="forbid")
        order_id: str = Field(description="the order")
        item_ids: list[Annotated[str, Field(max_length=64)]] = Field(description="the items to swap")

    op = Operation("Swap", "Swap items.", SwapArgs, True, False, lambda *a: ("", None))
    schema = plan_schema((op,))
    ok = schema.model_validate({"calls": [{"operation": "Swap", "args": {"order_id": "#1", "item_ids": ["a", "b"]}}]})
    assert ok.calls[0].args.item_ids == ["a", "b"]
    with pytest.raises(ValidationError):  # a bare string is not the list (the model once wrote one)
        schema.model_validate({"calls": [{"operation": "Swap", "args": {"order_id": "#1", "item_ids": "a"}}]})
    item_ids = schema.model_json_schema()["$defs"]["SwapArgs"]["properties"]["item_ids"]
    assert item_ids["anyOf"][0] == {"type": "array", "items": {"type": "string"}}  # no bound: a lighter grammar


# --- whole tokens, not substrings (issue 13) ---------------------------------------------------

@pytest.mark.parametrize(("value", "texts", "expected"), [
    # Latin names: a name inside a longer name is not grounded ...
    ("Li", ["Make me vice team leader of Liang"], None),
    ("Ann", ["My team leader is Anna Berg"], None),
    ("Berg", ["My team leader is Anna Bergman"], None),
    ("Lena", ["I'm with Helena now"], None),
    # ... but a whole word is, whatever punctuation or script stands next to it
    ("Li", ["Make me vice team leader of Li, please"], "Li"),
    ("Li", ["make me vice of (Li)"], "Li"),
    ("Li", ["我想成为Li的副领队"], "Li"),
    ("Anna Berg", ["My team leader is Anna  Berg."], "Anna Berg"),
    ("O'Neil", ["vice of O'Neil please"], "O'Neil"),
    # case: the same-case occurrence wins, else the user's own spelling
    ("Will", ["I will join Will's team"], "Will"),
    ("lena leader", ["vice of Lena Leader"], "Lena Leader"),
    # schools with numbers: the number is part of the token
    ("School 4", ["Move me to School 40"], None),
    ("School 4", ["Move me to School 4 please"], "School 4"),
])
def test_latin_values_are_grounded_on_word_boundaries(value, texts, expected):
    assert ground_args({"TeamLeaderName": value}, texts)[0]["TeamLeaderName"] == expected


@pytest.mark.parametrize(("value", "texts", "expected"), [
    ("李明", ["我想成为李明的副领队"], "李明"),
    ("李明", ["请把我设为 李明 的副领队"], "李明"),
    ("北京四中", ["把我的学校改为北京四中。"], "北京四中"),
    ("北京四中", ["把我的学校改为北京中学"], None),  # not contiguous
    ("李明", ["我想成为李的副领队"], None),
    ("李", ["我想成为李明的副领队"], None),  # one character inside a longer run
    ("李", ["领队的名字是：李"], "李"),
    ("Riverside 中学", ["请把学校改成 Riverside 中学"], "Riverside 中学"),
])
def test_cjk_values_are_grounded_as_contiguous_runs(value, texts, expected):
    assert ground_args({"SchoolName": value}, texts)[0]["SchoolName"] == expected


@pytest.mark.parametrize(("text", "present", "absent"), [
    ("set it to 40", {40}, {4, 0}),
    ("limit 4.5 please", set(), {4, 5}),
    ("problem nine", {9}, set()),
    ("fourteen", {14}, {4}),
    ("raise it to forty", {40}, {4}),
    ("把上传上限改成四十", {40}, {4, 10}),
    ("我想改阅卷第九题", {9}, set()),
    ("改成一百零五", {105}, {1, 5, 100}),
    ("第一题", {1}, set()),
    ("请帮我改一下阅卷题号", set(), {1}),  # 一下 = "a bit", not the number one
    ("改成三四个", set(), {3, 4, 34}),  # "three or four"
    ("上限改为４０", {40}, {4}),  # full-width digits
])
def test_numbers_are_whole_tokens_in_english_and_chinese(text, present, absent):
    found = numbers_in(text)
    assert present <= found and not (absent & found)


def test_an_integer_is_grounded_only_by_a_whole_number():
    assert ground_args({"Limit": 4}, ["请把上限改成40"]) == ({"Limit": None}, ["Limit"])
    assert ground_args({"Limit": 40}, ["请把上限改成四十"]) == ({"Limit": 40}, [])
    assert ground_args({"SubjectIndex": 3}, ["我想改阅卷第三题"]) == ({"SubjectIndex": 3}, [])
