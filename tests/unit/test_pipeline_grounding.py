"""Deterministic grounding of argument values, and the structured-output schemas."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from apis.registry import OPERATIONS
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
    schema = proposal_schema(tuple(OPERATIONS))
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
    schema = proposal_schema(tuple(OPERATIONS), with_answer=True)
    out = schema.model_validate({"call": {"operation": "AnswerDirectly", "answer": "Hello"}})
    assert out.call.answer == "Hello"
