"""The airline's own value kind: an airport named by its code or its city, in English or Chinese, and chosen among the
airline's codes by the reading's grammar (a kind a pack adds to chops.domain.values)."""

from __future__ import annotations

import json

import pytest

from apis.airline.args import SearchArgs
from apis.airline.pack import pack
from apis.airline.registry import OPERATIONS
from chops.domain.values import Evidence, ground
from chops.pipeline.read.schema import reading_schema


@pytest.mark.parametrize("said, origin, destination", [
    ("a seat from New York up to Seattle on May 20, please", "JFK", "SEA"),
    ("from LGA to sfo please, May 20", "LGA", "SFO"),
    ("我想5月20日从纽约飞西雅图", "JFK", "SEA"),
])
def test_an_airport_is_named_by_its_code_or_its_city(said, origin, destination):
    args = {"origin": origin, "destination": destination, "date": "2024-05-20"}
    assert ground(SearchArgs, args, Evidence(texts=(said,), now=pack.now()))[1] == []


def test_an_airport_nobody_named_is_not_grounded():
    args = {"origin": "JFK", "destination": "BOS", "date": "2024-05-20"}
    assert ground(SearchArgs, args, Evidence(texts=("New York to Seattle, 2024-05-20",)))[1] == ["destination"]


def test_the_reading_chooses_an_airport_among_the_airlines_codes():
    schema = json.dumps(reading_schema(tuple(OPERATIONS.values())).model_json_schema())
    assert '"SEA"' in schema and '"BOS"' in schema


@pytest.mark.parametrize("said, reason, grounded", [
    ("I'm sick and can't fly", "health", True),
    ("我生病了，去不了", "health", True),
    ("there's a big storm coming", "weather", True),
    ("my plans changed", "change_of_plan", True),
    ("it clashes with my cousin's wedding", "health", False),
    ("我表哥那天结婚", "weather", False),
])
def test_a_cancel_reason_is_the_travellers_words(said, reason, grounded):
    from apis.airline.args import CancelArgs

    dropped = ground(CancelArgs, {"reservation_id": "ZFA04Y", "reason": reason},
                     Evidence(texts=(f"cancel ZFA04Y. {said}",)))[1]
    assert (dropped == []) is grounded
