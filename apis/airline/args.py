"""Typed arguments of the airline's operations: one pydantic model per operation, a description on every field (the
models read them) and a value kind on every field at any depth (``chops.domain.values``). Nested arguments are real
nested models, as tau2's tools take them: a booking's ``flights`` ({flight_number, date}), ``passengers``
({first_name, last_name, dob}) and ``payment_methods`` ({payment_id, amount}).

The acting traveller is never an argument (tau2's ``user_id`` is dropped): it is the signed-in user. What the pack
computes is not asked of the model: the bags to pay for (``nonfree_baggages``, checked when given) and a
compensation's amount (from the reservation and the kind of disruption).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from apis.airline.airports import AIRPORT_KIND
from chops.domain.args import Args, CalculateArgs, Id, NoArgs, Text  # noqa: F401 (the pack's names)
from chops.domain.operations import CHOICES_FROM
from chops.domain.values import kind
from chops.i18n import N_

MAX_LEGS = 6  # flights of one reservation (the data's longest trip has 4)
MAX_PEOPLE = 10  # passengers given; the policy's five is the pack's check, which says so in its own words


def _upper(value: Any) -> Any:
    # Codes are upper case in the data; a model (or a customer) writes 'jfk', 'hat001', 'zfa04y'.
    return value.strip().upper() if isinstance(value, str) else value


Code = Annotated[str, BeforeValidator(_upper), Field(max_length=32)]
Airport = Annotated[str, BeforeValidator(_upper), Field(pattern=r"^[A-Z]{3}$")]
Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Cabin = Literal["basic_economy", "economy", "business"]
# Why a traveller cancels, as the policy asks it ("change of plan, airline cancelled flight, or other reasons"), with
# the two reasons the travel insurance covers (``checks.COVERED_REASONS``).
Reason = Literal["change_of_plan", "airline_cancelled", "health", "weather", "other"]

# The words by which travellers name each reason, in English and Chinese (a reason is grounded only by them).
REASON_WORDS = {
    "change_of_plan": ["plans changed", "plan changed", "change of plan", "changed my plan", "change my plan",
                       "no longer travel", "can't make", "cannot make", "计划有变", "计划变", "改变计划", "行程有变"],
    "airline_cancelled": ["airline cancelled", "airline canceled", "flight was cancelled", "flight was canceled",
                          "flight got cancelled", "you cancelled", "航班被取消", "航班取消了", "你们取消"],
    "health": ["sick", "ill", "illness", "injur", "hospital", "doctor", "medical", "surgery", "health", "生病",
               "病了", "医院", "住院", "手术", "身体", "受伤"],
    "weather": ["weather", "storm", "snow", "hurricane", "blizzard", "typhoon", "flood", "天气", "暴风", "台风",
                "暴雨", "大雪"],
    "other": ["other reason", "another reason", "something else", "personal", "其他原因", "别的原因", "个人原因"],
}

# Where an id's values come from in look-up results: the profile lists the traveller's reservation ids and payment
# method ids, a reservation's look-up its own id, a search its flight numbers.
RESERVATION = {**kind("id", from_=["reservations", "reservation_id"]),
               CHOICES_FROM: ["reservations", "reservation_id"]}
# Which method pays is the traveller's choice: named by its id or by what sets it apart ("the card ending in 2135").
METHOD = {**kind("id", from_=["payment_methods.id"], said=True), CHOICES_FROM: ["payment_methods.id"]}
FLIGHT = kind("id", from_=["flight_number"])
# An airport is the airline's own kind: named by its code or its city, chosen among the codes (``airports``).
AIRPORT = kind(AIRPORT_KIND.name)


def _reservation(what: str) -> Any:
    return Field(title=N_("which reservation (its id, such as ZFA04Y)"),
                 description=f"the id of the reservation {what}, six letters and digits, e.g. 'ZFA04Y'",
                 json_schema_extra=RESERVATION)


def _method(title: str, what: str) -> Any:
    return Field(title=title,
                 description=f"the payment method {what}: one of the traveller's gift cards or credit cards (not a "
                             "certificate), e.g. 'credit_card_7815826'", json_schema_extra=METHOD)


class FlightRef(Args):
    """One flight of a trip: its number and date."""

    flight_number: Code = Field(title=N_("the flight number"), description="the flight number, e.g. 'HAT001'",
                                json_schema_extra=FLIGHT)
    date: Day = Field(title=N_("the date of the flight"), description="the flight's date, 'YYYY-MM-DD'",
                      json_schema_extra=kind("date"))


class Passenger(Args):
    """A passenger: name and date of birth."""

    first_name: Text = Field(title=N_("the passenger's first name"), description="the passenger's first name",
                             json_schema_extra=kind("text"))
    last_name: Text = Field(title=N_("the passenger's last name"), description="the passenger's last name",
                            json_schema_extra=kind("text"))
    dob: Day = Field(title=N_("the passenger's date of birth"), description="date of birth, 'YYYY-MM-DD'",
                     json_schema_extra=kind("date"))


class Payment(Args):
    """One payment method of a booking and the amount it pays."""

    payment_id: Id = Field(title=N_("which payment method"),
                             description="one of the traveller's payment methods, e.g. 'gift_card_7815826'",
                             json_schema_extra=METHOD)
    amount: Decimal = Field(gt=0, max_digits=12, decimal_places=2, title=N_("the amount it pays"),
                            description="the dollars this method pays", json_schema_extra=kind("money"))


class ReservationArgs(Args):
    """Arguments of get_reservation_details and cancel_reservation."""

    reservation_id: Code = _reservation("to look up")


class FlightStatusArgs(FlightRef):
    """Arguments of get_flight_status: the flight and its date."""


class Route(Args):
    """Where a trip goes: from one airport to another."""

    origin: Airport = Field(title=N_("where from (airport)"), description="the origin airport's IATA code, e.g. 'JFK'",
                            json_schema_extra=AIRPORT)
    destination: Airport = Field(title=N_("where to (airport)"),
                                 description="the destination airport's IATA code (a round trip's far end), e.g. 'LAX'",
                                 json_schema_extra=AIRPORT)


class SearchArgs(Route):
    """Arguments of search_direct_flight and search_onestop_flight."""

    date: Day = Field(title=N_("the date of travel"), description="the day of departure, 'YYYY-MM-DD'",
                      json_schema_extra=kind("date"))


class CancelArgs(Args):
    """Arguments of cancel_reservation."""

    reservation_id: Code = _reservation("to cancel")
    # The traveller's reason, not the model's guess: what the insurance covers depends on it. A reason is the
    # traveller's words' (these name each), never the model's reading of other words: a family celebration was read
    # as health, and the insurance refunded it.
    reason: Reason = Field(title=N_("the reason for cancelling: a change of plans, a flight the airline cancelled, "
                                    "health, weather, or another reason"),
                           description="why the traveller cancels: 'change_of_plan', 'airline_cancelled' (the airline "
                                       "cancelled a flight), 'health', 'weather' or 'other'",
                           json_schema_extra=kind("choice", said=True, words=REASON_WORDS))


class BookArgs(Route):
    """Arguments of book_reservation."""

    flight_type: Literal["one_way", "round_trip"] = Field(
        title=N_("one way or round trip"), description="'one_way' or 'round_trip'",
        json_schema_extra=kind("choice", said=True))
    cabin: Cabin = Field(title=N_("the cabin"),
                         description="'basic_economy', 'economy' or 'business', for every flight",
                         json_schema_extra=kind("choice", said=True))
    flights: list[FlightRef] = Field(min_length=1, max_length=MAX_LEGS, title=N_("the flights"),
                                     description="every flight of the trip in order, each {flight_number, date}")
    passengers: list[Passenger] = Field(min_length=1, max_length=MAX_PEOPLE, title=N_("the passengers"),
                                        description="each passenger's {first_name, last_name, dob}; at most five")
    payment_methods: list[Payment] = Field(min_length=1, max_length=MAX_PEOPLE, title=N_("how it is paid"),
                                           description="each payment method of the traveller's profile with the "
                                                       "amount it pays, {payment_id, amount}; they add up to the total")
    total_baggages: int = Field(ge=0, le=99, title=N_("how many checked bags"),
                                description="the number of checked bags in all", json_schema_extra=kind("number"))
    nonfree_baggages: int | None = Field(None, ge=0, le=99, title=N_("how many bags to pay for"),
                                         description="the bags over the free allowance; computed by the airline",
                                         json_schema_extra=kind("computed"))
    insurance: Literal["yes", "no"] = Field(title=N_("travel insurance ($30 a passenger)"),
                                            description="'yes' to buy travel insurance ($30 per passenger), else 'no'",
                                            json_schema_extra=kind("choice", said=True))


class UpdateFlightsArgs(Args):
    """Arguments of update_reservation_flights."""

    reservation_id: Code = _reservation("to change")
    cabin: Cabin = Field(title=N_("the cabin"), description="the cabin for every flight: 'basic_economy', 'economy' "
                         "or 'business' (the current one to keep it)", json_schema_extra=kind("choice", said=True))
    flights: list[FlightRef] = Field(min_length=1, max_length=MAX_LEGS, title=N_("the flights"),
                                     description="EVERY flight of the changed reservation in order, kept ones too, "
                                                 "each {flight_number, date}")
    payment_id: Id = _method(N_("which gift card or credit card pays or receives the difference"),
                             "that pays or receives the price difference")


class BaggageArgs(Args):
    """Arguments of update_reservation_baggages."""

    reservation_id: Code = _reservation("whose bags change")
    total_baggages: int = Field(ge=0, le=99, title=N_("how many checked bags"),
                                description="the new number of checked bags in all (bags are only added)",
                                json_schema_extra=kind("number"))
    nonfree_baggages: int | None = Field(None, ge=0, le=99, title=N_("how many bags to pay for"),
                                         description="the bags over the free allowance; computed by the airline",
                                         json_schema_extra=kind("computed"))
    payment_id: Id = _method(N_("which gift card or credit card pays for the bags"), "that pays for the added bags")


class PassengersArgs(Args):
    """Arguments of update_reservation_passengers."""

    reservation_id: Code = _reservation("whose passengers change")
    passengers: list[Passenger] = Field(min_length=1, max_length=MAX_PEOPLE, title=N_("the passengers"),
                                        description="every passenger of the reservation after the change, "
                                                    "{first_name, last_name, dob}; as many as before")


class CertificateArgs(Args):
    """Arguments of send_certificate: the reservation and what went wrong; the amount is the airline's."""

    reservation_id: Code = _reservation("the compensation is for")
    disruption: Literal["cancelled", "delayed"] = Field(
        title=N_("what happened to the flight: cancelled or delayed"),
        description="'cancelled' (the airline cancelled a flight of it) or 'delayed' (a flight of it is delayed)",
        json_schema_extra=kind("choice", said=True))
