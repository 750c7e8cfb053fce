"""The airline's whole state as one JSON document (tau2's ``db.json``), typed and strict, so a malformed file fails
loudly on load instead of loading half. ``load`` reads this shape and ``export`` writes it back.

``{"flights": {flight_number: Flight}, "users": {user_id: User}, "reservations": {reservation_id: Reservation}}``.
A reservation's ``status`` is absent from db.json and set (``"cancelled"``) only by a cancellation.
"""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from apis.airline.tables import STATUS_FIELDS
from chops.domain.document import Address, Amount, Name, Strict, check_ids, check_listed

Cabin = Literal["basic_economy", "economy", "business"]
Source = Literal["credit_card", "gift_card", "certificate"]


class PerCabin(Strict):
    """Seats left per cabin on an available flight date."""

    basic_economy: int
    economy: int
    business: int


class Prices(Strict):
    """Fares per cabin on an available flight date (whole dollars in the data)."""

    basic_economy: Amount
    economy: Amount
    business: Amount


class FlightDate(Strict):
    """One date of a flight: its status and the fields that status has (``tables.STATUS_FIELDS``), no others."""

    status: Literal["available", "delayed", "on time", "flying", "landed", "cancelled"]
    actual_departure_time_est: str | None = None
    actual_arrival_time_est: str | None = None
    estimated_departure_time_est: str | None = None
    estimated_arrival_time_est: str | None = None
    available_seats: PerCabin | None = None
    prices: Prices | None = None

    @model_validator(mode="after")
    def _fields_of_status(self) -> FlightDate:
        have = {k for k, v in self if k != "status" and v is not None}
        if have != set(STATUS_FIELDS[self.status]):
            raise ValueError(f"a {self.status!r} flight date has {sorted(STATUS_FIELDS[self.status])}, "
                             f"not {sorted(have)}")
        return self


class Flight(Strict):
    """A flight number's route and schedule, and its status on each date (``HH:MM:SS``, ``+1``: the next day)."""

    origin: str
    destination: str
    flight_number: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    dates: dict[str, FlightDate]


class PaymentMethod(Strict):
    """A credit card (brand, last four digits) or a gift card or certificate (an amount)."""

    source: Source
    id: str
    brand: str | None = None
    last_four: str | None = None
    amount: Amount | None = None

    @model_validator(mode="after")
    def _fields_of_source(self) -> PaymentMethod:
        card = self.source == "credit_card"
        if card != (self.brand is not None and self.last_four is not None) or card == (self.amount is not None):
            raise ValueError(f"payment method {self.id}: a credit card has a brand and last four digits, a gift card "
                             "or certificate an amount")
        return self


class Passenger(Strict):
    """A passenger of a reservation or a saved one: name and date of birth."""

    first_name: str
    last_name: str
    dob: str


class User(Strict):
    """A traveller: profile, payment methods by id, saved passengers, membership, reservation ids in order."""

    user_id: str
    name: Name
    address: Address
    email: str
    dob: str
    payment_methods: dict[str, PaymentMethod]
    saved_passengers: list[Passenger]
    membership: Literal["regular", "silver", "gold"]
    reservations: list[str]


class ReservationFlight(Strict):
    """One flight of a reservation at the fare paid for it."""

    origin: str
    destination: str
    flight_number: str
    date: str
    price: Amount


class Payment(Strict):
    """One entry of a reservation's payment history (negative: a refund)."""

    payment_id: str
    amount: Amount


class Reservation(Strict):
    """A booking: trip, cabin, flights, passengers, payments, bags, insurance; ``status`` only once cancelled."""

    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: Literal["one_way", "round_trip"]
    cabin: Cabin
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Literal["yes", "no"]
    status: Literal["cancelled"] | None = None


class Document(Strict):
    """The whole airline: flights, users and reservations by id."""

    flights: dict[str, Flight]
    users: dict[str, User]
    reservations: dict[str, Reservation]

    def check(self) -> None:
        """Cross-record rules the tables rely on (``ValueError`` naming the first offender): mapping keys equal the
        records' ids, every reservation is in its traveller's list exactly once and every listed one exists, and a
        reservation's flights are dates of known flights."""
        check_ids("flight", self.flights, "flight_number")
        check_ids("user", self.users, "user_id")
        check_ids("reservation", self.reservations, "reservation_id")
        for user in self.users.values():
            check_ids(f"user {user.user_id}: payment method", user.payment_methods, "id")
        check_listed(self.users, "reservations", self.reservations, "reservation")
        for rid, r in self.reservations.items():
            for f in r.flights:
                if f.flight_number not in self.flights or f.date not in self.flights[f.flight_number].dates:
                    raise ValueError(f"reservation {rid} holds flight {f.flight_number} on {f.date}, which is none")
