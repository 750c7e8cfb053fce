"""Value kinds at any depth (chops.domain.values), with the words they read (chops.domain.words, chops.domain.dates):
made-up bookings and wordings in English and Chinese."""

from __future__ import annotations

import datetime as dt
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from chops.domain.dates import dates_written
from chops.domain.values import Evidence, KINDS, ValueKind, ground, kind, register, slots
from chops.domain.words import numbers_written, spelled_in

NOW = dt.datetime(2024, 5, 15, 15, 0)  # a Wednesday


class Leg(BaseModel):
    code: str = Field(json_schema_extra=kind("id", from_=["legs"]))
    day: str = Field(json_schema_extra=kind("date"))


class Traveller(BaseModel):
    first_name: str = Field(json_schema_extra=kind("text"))
    born: str = Field(json_schema_extra=kind("date"))


class Trip(BaseModel):
    legs: list[Leg]
    travellers: list[Traveller]
    seats: int
    total: float = Field(json_schema_extra=kind("money"))
    fare: Literal["plain", "flex"] = Field(json_schema_extra=kind("choice"))
    note: str = Field("", json_schema_extra=kind("computed"))


def test_slots_walk_nested_records_and_lists_of_them():
    names = {s.name: s.kind for s in slots(Trip)}
    assert names == {"legs[].code": "id", "legs[].day": "date", "travellers[].first_name": "text",
                     "travellers[].born": "date", "seats": "number", "total": "money", "fare": "choice",
                     "note": "computed"}
    assert next(s for s in slots(Trip) if s.name == "legs[].code").options == {"from": ["legs"]}


@pytest.mark.parametrize("said, days", [
    ("I'd like to go on May 20 and come back the 24th", {"2024-05-20", "2024-05-24"}),
    ("我想5月20日走，5月24号回来", {"2024-05-20", "2024-05-24"}),
    ("leaving tomorrow, back next Friday", {"2024-05-16", "2024-05-17", "2024-05-24"}),
    ("明天出发，下周五回来", {"2024-05-16", "2024-05-17", "2024-05-24"}),
    ("五月二十日", {"2024-05-20"}),
    ("5/20 please", {"2024-05-20"}),
    ("born 12 March 1985", {"1985-03-12"}),
])
def test_dates_written_read_against_the_clock(said, days):
    assert days <= dates_written(said, NOW)


@pytest.mark.parametrize("said", ["I have 2 bags", "may I add a bag?", "我有两个行李"])
def test_no_day_in_words_that_name_none(said):
    assert dates_written(said, NOW) == set()


def test_numbers_and_spellings_in_both_languages():
    assert {2, 40} <= numbers_written("two bags and forty dollars")
    assert {3, 15} <= numbers_written("三个人，第十五排")
    assert 1 not in numbers_written("一下")
    assert spelled_in("li", ["我想成为Li的副领队"]) == "Li"
    assert spelled_in("Ann", ["Anna is here"]) is None


def _trip(**over):
    args = {"legs": [{"code": "XY100", "day": "2024-05-20"}, {"code": "XY101", "day": "2024-05-24"}],
            "travellers": [{"first_name": "Mira", "born": "1985-03-12"}], "seats": 1, "total": 412.0,
            "fare": "flex", "note": "x"}
    return {**args, **over}


def test_a_booking_grounded_from_english_words_and_look_ups():
    evidence = Evidence(texts=("Book me XY100 on May 20 and XY101 back on the 24th, one seat, for Mira, "
                               "born 12 March 1985.",), known=frozenset({"412", "XY100", "XY101"}), now=NOW)
    out, dropped = ground(Trip, _trip(), evidence)
    assert dropped == [] and out["legs"][1]["day"] == "2024-05-24" and out["total"] == 412.0


def test_a_booking_grounded_from_chinese_words():
    evidence = Evidence(texts=("帮我订XY100，5月20日出发，5月24号坐XY101回来，一个座位，乘客Mira，1985-03-12出生。",),
                        known=frozenset({"412.00"}), now=NOW)
    out, dropped = ground(Trip, _trip(), evidence)
    assert dropped == [], dropped


def test_a_value_nobody_said_is_dropped_by_its_path():
    evidence = Evidence(texts=("Book XY100 and XY101 on May 20, one seat, for Mira born 12 March 1985",),
                        known=frozenset({"412"}), now=NOW)
    out, dropped = ground(Trip, _trip(), evidence)
    assert dropped == ["legs.1.day"] and out["legs"][1]["day"] is None and out["legs"][0]["day"] == "2024-05-20"


def test_money_within_half_a_cent_of_one_seen_and_no_other():
    said = Evidence(texts=("the total is 1,628",), now=NOW)
    assert ground(Trip, _trip(total=1628.0), said)[0]["total"] == 1628.0
    assert ground(Trip, _trip(total=1628.004), said)[0]["total"] == 1628.004
    assert "total" in ground(Trip, _trip(total=1630), said)[1]


def test_an_empty_list_is_not_given():
    out, dropped = ground(Trip, _trip(travellers=[]), Evidence(texts=("May 20, the 24th, one, 412",), now=NOW))
    assert out["travellers"] is None and "travellers" in dropped


def test_a_pack_registers_a_kind_of_its_own():
    register(ValueKind("seat", "seat such as 14C", lambda v, e, o: v if str(v).upper() in " ".join(e.texts).upper()
                       else None))
    try:
        class SeatArgs(BaseModel):
            seat: str = Field(json_schema_extra=kind("seat"))

        assert ground(SeatArgs, {"seat": "14c"}, Evidence(texts=("window seat 14C please",)))[1] == []
        assert ground(SeatArgs, {"seat": "15A"}, Evidence(texts=("window seat 14C please",)))[1] == ["seat"]
    finally:
        KINDS.pop("seat")


def test_a_choice_the_customer_must_name_is_grounded_only_when_named():
    class CancelArgs(BaseModel):
        reason: Literal["change of plan", "weather"] = Field(json_schema_extra=kind("choice", said=True))
        cabin: Literal["economy", "business"] = Field(json_schema_extra=kind("choice"))

    said = Evidence(texts=("please cancel it, the weather is awful",))
    assert ground(CancelArgs, {"reason": "weather", "cabin": "economy"}, said) == (
        {"reason": "weather", "cabin": "economy"}, [])  # a choice not held to the words stands as the grammar gave
    assert ground(CancelArgs, {"reason": "change of plan", "cabin": "economy"}, said)[1] == ["reason"]


SEEN = ({"payment_methods": [{"id": "credit_card_11", "source": "credit_card", "card": "visa ending 2135"},
                             {"id": "credit_card_22", "source": "credit_card", "card": "mastercard ending 9981"},
                             {"id": "gift_card_33", "source": "gift_card", "balance": 80}]},)


class PayArgs(BaseModel):
    payment_id: str = Field(json_schema_extra=kind("id", from_=["payment_methods.id"], said=True))


@pytest.mark.parametrize("said, chosen", [
    ("put it on the card ending in 2135", "credit_card_11"),
    ("use my Mastercard please", "credit_card_22"),
    ("charge my gift card", "gift_card_33"),
    ("用尾号9981的卡付", "credit_card_22"),
    ("credit_card_11", "credit_card_11"),
])
def test_an_id_the_customer_must_choose_is_named_by_what_sets_its_record_apart(said, chosen):
    evidence = Evidence(texts=(said,), known=frozenset({"credit_card_11", "credit_card_22", "gift_card_33"}),
                        seen=SEEN)
    for option in ("credit_card_11", "credit_card_22", "gift_card_33"):
        assert (ground(PayArgs, {"payment_id": option}, evidence)[1] == []) is (option == chosen), (said, option)


def test_words_every_record_shares_choose_none():
    evidence = Evidence(texts=("use my credit card, the one ending in something",), seen=SEEN,
                        known=frozenset({"credit_card_11", "credit_card_22"}))
    assert ground(PayArgs, {"payment_id": "credit_card_11"}, evidence)[1] == ["payment_id"]
