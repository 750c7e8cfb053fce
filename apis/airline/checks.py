"""The airline policy's deterministic rules, as the pack's own checks: one named function each, in the order
``CHECKS`` lists them, each raising a ``chops.domain.outcomes`` error whose message is a msgid of the pack's catalog
(``locale/zh/LC_MESSAGES/chops.po``) formatted with its fields. tau2's tools enforce almost none of these (its
README: "the agent must"); here the writes cannot break them whatever a model proposes.

The clock is the policy's: "now" is 2024-05-15 15:00 EST (``NOW``, ``AirlinePack.now``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, NoReturn

from apis.airline.views import usd
from chops.domain.outcomes import DomainError, InvalidArgument, NotInSystem, PreconditionFailed, Said
from chops.i18n import N_

Row = dict[str, Any]
NOW = dt.datetime(2024, 5, 15, 15, 0)  # the policy's first line; tau2's tools stamp bookings with it
CANCEL_WINDOW = dt.timedelta(hours=24)
MAX_PASSENGERS = 5
INSURANCE_FEE, BAG_FEE = Decimal(30), Decimal(50)  # per passenger; per bag over the allowance
FREE_BAGS = {"regular": {"basic_economy": 0, "economy": 1, "business": 2},
             "silver": {"basic_economy": 1, "economy": 2, "business": 3},
             "gold": {"basic_economy": 2, "economy": 3, "business": 4}}  # per passenger, by membership and cabin
MOST_OF_SOURCE = {"certificate": 1, "credit_card": 1, "gift_card": 3}  # payment methods of a booking, by kind
COMPENSATION = {"cancelled": Decimal(100), "delayed": Decimal(50)}  # a certificate's amount per passenger
FLOWN = ("landed", "flying")  # a flight date that has taken off
COVERED_REASONS = ("health", "weather")  # what the travel insurance covers


def now() -> dt.datetime:
    """The airline's clock: the policy's "now" (a data set's moment; a live airline's would be the wall clock)."""
    return NOW


def refuse(error: type[DomainError], msgid: str, **fields: Any) -> NoReturn:
    """Raise ``error`` with the catalog message ``msgid`` formatted with ``fields`` (a ``Said``: the msgid and fields
    ride on the result, so a reply in the customer's language says it in theirs)."""
    raise error(Said(msgid, **fields))


def _words(value: str) -> str:
    return value.replace("_", " ")


def not_cancelled(reservation: Row) -> None:
    """A cancelled reservation is not changed, cancelled again or compensated for a change."""
    if reservation["status"] == "cancelled":
        refuse(PreconditionFailed, N_("Reservation {reservation_id} is already cancelled."),
               reservation_id=reservation["reservation_id"])


def nothing_flown(reservation: Row, statuses: Mapping[tuple[str, str], str], *, cancelling: bool) -> None:
    """Nothing is cancelled, and no cabin changed, once a flight of the reservation has taken off (landed or
    flying): the policy sends a partly flown trip's cancellation to a person."""
    flown = [f["flight_number"] for f in reservation["flights"]
             if statuses.get((f["flight_number"], f["date"])) in FLOWN]
    if flown and cancelling:
        refuse(PreconditionFailed, N_("Reservation {reservation_id} cannot be cancelled: flight {flight} has already "
                                      "been flown; a person can help with a trip partly flown."),
               reservation_id=reservation["reservation_id"], flight=flown[0])
    if flown:
        refuse(PreconditionFailed, N_("The cabin of reservation {reservation_id} cannot change: flight {flight} has "
                                      "already been flown."), reservation_id=reservation["reservation_id"],
               flight=flown[0])


def may_cancel(reservation: Row, statuses: Mapping[tuple[str, str], str], reason: str, now: dt.datetime) -> str:
    """A reservation may be cancelled when it was booked within the last 24 hours, a flight of it was cancelled by
    the airline, it is in business, or it is insured and the reason is one the insurance covers (health, weather).
    Returns which of these allows it."""
    booked = dt.datetime.fromisoformat(reservation["created_at"])
    if dt.timedelta(0) <= now - booked <= CANCEL_WINDOW:
        return N_("booked within 24 hours")
    if any(statuses.get((f["flight_number"], f["date"])) == "cancelled" for f in reservation["flights"]):
        return N_("a flight was cancelled by the airline")
    if reservation["cabin"] == "business":
        return N_("business cabin")
    if reservation["insurance"] == "yes" and reason in COVERED_REASONS:
        return N_("travel insurance")
    if reservation["insurance"] == "yes":
        refuse(PreconditionFailed, N_("Reservation {reservation_id} cannot be cancelled: it was booked more than 24 "
                                      "hours ago, no flight of it was cancelled by the airline, it is not business, "
                                      "and its travel insurance covers only health or weather reasons, not "
                                      "'{reason}'."), reservation_id=reservation["reservation_id"],
               reason=_words(reason))
    refuse(PreconditionFailed, N_("Reservation {reservation_id} cannot be cancelled: it was booked more than 24 hours "
                                  "ago, no flight of it was cancelled by the airline, it is not business, and it has "
                                  "no travel insurance."), reservation_id=reservation["reservation_id"])


def flights_changeable(reservation: Row, legs: Sequence[Row]) -> None:
    """A basic economy reservation keeps its flights (its cabin may still change)."""
    if reservation["cabin"] == "basic_economy" and _keys(legs) != _keys(reservation["flights"]):
        refuse(PreconditionFailed, N_("Reservation {reservation_id} is basic economy: its flights cannot be changed "
                                      "(its cabin can)."), reservation_id=reservation["reservation_id"])


def flown_kept(reservation: Row, statuses: Mapping[tuple[str, str], str], legs: Sequence[Row]) -> None:
    """A flight already flown stays in the reservation: what has been flown cannot be exchanged."""
    kept = _keys(legs)
    for f in reservation["flights"]:
        if statuses.get((f["flight_number"], f["date"])) in FLOWN and (f["flight_number"], f["date"]) not in kept:
            refuse(PreconditionFailed, N_("Flight {flight} on {date} has already been flown; it stays in the "
                                          "reservation."), flight=f["flight_number"], date=f["date"])


def same_trip(origin: str, destination: str, flight_type: str, legs: Sequence[Row]) -> None:
    """The flights make the trip: they start at the origin and connect one to the next; a one-way trip ends at the
    destination, a round trip reaches it and comes back to the origin. A change keeps the reservation's origin,
    destination and trip type; a booking's flights are the trip it names."""
    ends = [(leg["origin"], leg["destination"]) for leg in legs]
    connected = bool(ends) and ends[0][0] == origin and all(a[1] == b[0] for a, b in zip(ends, ends[1:]))
    if flight_type == "one_way":
        whole = connected and ends[-1][1] == destination
    else:
        whole = connected and ends[-1][1] == origin and any(e[1] == destination for e in ends[:-1])
    if not whole:
        refuse(InvalidArgument, N_("These flights ({route}) are not a {flight_type} trip from {origin} to "
                                   "{destination}."), route=", ".join(f"{a}-{b}" for a, b in ends) or "none",
               flight_type=_words(flight_type), origin=origin, destination=destination)


def bookable(day: Row | None, flight_number: str, date: str, cabin: str, passengers: int) -> None:
    """A flight is booked only on a date it is available (not departed, delayed, cancelled), with a seat of the cabin
    for every passenger."""
    if day is None:
        refuse(NotInSystem, N_("There is no flight {flight} on {date}."), flight=flight_number, date=date)
    if day["status"] != "available":
        refuse(PreconditionFailed, N_("Flight {flight} on {date} cannot be booked: it is {status}."),
               flight=flight_number, date=date, status=day["status"])
    if day[f"seats_{cabin}"] < passengers:
        refuse(PreconditionFailed, N_("Flight {flight} on {date} has {seats} {cabin} seat(s) left, fewer than the "
                                      "{passengers} passenger(s)."), flight=flight_number, date=date,
               seats=day[f"seats_{cabin}"], cabin=_words(cabin), passengers=passengers)


def passenger_count(count: int) -> None:
    """A booking has one to five passengers."""
    if not 1 <= count <= MAX_PASSENGERS:
        refuse(InvalidArgument, N_("A reservation has 1 to {most} passengers, not {count}."), most=MAX_PASSENGERS,
               count=count)


def same_passenger_count(reservation: Row, count: int) -> None:
    """Passengers may be changed, not their number (not even by a person)."""
    if count != len(reservation["passengers"]):
        refuse(PreconditionFailed, N_("Reservation {reservation_id} has {have} passenger(s); the passengers can be "
                                      "changed but not their number ({count} given)."),
               reservation_id=reservation["reservation_id"], have=len(reservation["passengers"]), count=count)


def bags_added(reservation: Row, total: int) -> None:
    """Checked bags can be added, not removed."""
    if total < reservation["total_baggages"]:
        refuse(PreconditionFailed, N_("Reservation {reservation_id} has {have} checked bag(s); bags can be added but "
                                      "not removed ({total} given)."), reservation_id=reservation["reservation_id"],
               have=reservation["total_baggages"], total=total)


def free_bags(membership: str, cabin: str, passengers: int) -> int:
    """The free checked bags of a reservation: per passenger, by the booking traveller's membership and the cabin."""
    return FREE_BAGS[membership][cabin] * passengers


def nonfree_bags(given: int | None, computed: int) -> int:
    """The bags paid for are the bags over the free allowance: computed by the pack, and a count given must be it."""
    if given is not None and given != computed:
        refuse(InvalidArgument, N_("{given} bag(s) to pay for were given, but {computed} are over the free "
                                   "allowance."), given=given, computed=computed)
    return computed


def payment_mix(methods: Mapping[str, Row], chosen: Sequence[str]) -> None:
    """A booking is paid with methods of the traveller's own profile, each once: at most one travel certificate,
    one credit card and three gift cards."""
    for payment_id in chosen:
        if payment_id not in methods:
            refuse(NotInSystem, N_("{payment_id} is not one of your payment methods."), payment_id=payment_id)
    twice = sorted({p for p in chosen if chosen.count(p) > 1})
    if twice:
        refuse(InvalidArgument, N_("{payment_id} is given twice; give each payment method once with its whole "
                                   "amount."), payment_id=twice[0])
    for source, most in MOST_OF_SOURCE.items():
        used = sum(1 for p in chosen if methods[p]["source"] == source)
        if used > most:
            refuse(InvalidArgument, N_("A reservation can use at most one travel certificate, one credit card and "
                                       "three gift cards ({used} {kind} given)."), used=used, kind=_words(source))


def covers(method: Row, amount: Decimal) -> None:
    """A gift card or certificate pays at most its balance."""
    if method["source"] != "credit_card" and method["amount"] < amount:
        refuse(PreconditionFailed, N_("{payment_id} holds {balance}, less than the {amount} it would pay."),
               payment_id=method["payment_id"], balance=usd(method["amount"]), amount=usd(amount))


def adds_up(total: Decimal, paid: Decimal) -> None:
    """The payments add up to the price exactly (fares x passengers, $30 a passenger insured, $50 a paid bag)."""
    if paid != total:
        refuse(InvalidArgument, N_("The payments add up to {paid}, but the reservation costs {total}."),
               paid=usd(paid), total=usd(total))


def change_method(methods: Mapping[str, Row], payment_id: str) -> Row:
    """A change is paid, or refunded, with one gift card or credit card of the traveller's own profile; a
    certificate cannot pay a change."""
    method = methods.get(payment_id)
    if method is None:
        refuse(NotInSystem, N_("{payment_id} is not one of your payment methods."), payment_id=payment_id)
    if method["source"] == "certificate":
        refuse(InvalidArgument, N_("A travel certificate cannot pay for a change; use a gift card or a credit card."))
    return method


def compensation(user: Row, reservation: Row, statuses: Mapping[tuple[str, str], str], disruption: str,
                 given: Row | None) -> Decimal:
    """A certificate as a gesture, for silver and gold members, insured or business travellers only: $100 a
    passenger for a flight the airline cancelled, $50 a passenger for a delayed flight once the reservation was
    changed or cancelled; one per reservation. Returns the amount."""
    rid = reservation["reservation_id"]
    if user["membership"] == "regular" and reservation["insurance"] != "yes" and reservation["cabin"] != "business":
        refuse(PreconditionFailed, N_("No compensation is due for reservation {reservation_id}: it is given to silver "
                                      "and gold members, insured travellers and business travellers."),
               reservation_id=rid)
    if given is not None:
        refuse(PreconditionFailed, N_("Reservation {reservation_id} was compensated already ({amount})."),
               reservation_id=rid, amount=usd(given["amount"]))
    hit = [f for f in reservation["flights"] if statuses.get((f["flight_number"], f["date"])) == disruption]
    if disruption == "cancelled" and not hit:
        refuse(PreconditionFailed, N_("No flight of reservation {reservation_id} was cancelled by the airline."),
               reservation_id=rid)
    if disruption == "delayed" and not reservation["delay_rebooked"]:
        if not hit:
            refuse(PreconditionFailed, N_("No flight of reservation {reservation_id} is delayed."), reservation_id=rid)
        if reservation["status"] != "cancelled":
            refuse(PreconditionFailed, N_("A delay is compensated only after reservation {reservation_id} is changed "
                                          "or cancelled."), reservation_id=rid)
    return COMPENSATION[disruption] * len(reservation["passengers"])


def _keys(legs: Sequence[Row]) -> list[tuple[str, str]]:
    return [(leg["flight_number"], leg["date"]) for leg in legs]


# The checks in the order the writes run them.
CHECKS = (not_cancelled, nothing_flown, may_cancel, flights_changeable, flown_kept, same_trip, bookable,
          passenger_count, same_passenger_count, bags_added, nonfree_bags, payment_mix, covers, adds_up,
          change_method, compensation)
