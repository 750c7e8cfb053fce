"""The airline's tables (SQLAlchemy Core, their own ``MetaData``): flights and their dates, travellers with their
payment methods and saved passengers, reservations with their flights, passengers and payment history.

Why the columns are what they are:

* Money is ``Numeric(12, 2)``: fares and payments are whole dollars in the data, gift card and certificate balances
  are to the cent; exact on MariaDB (DECIMAL) and read back as ``Decimal`` on SQLite.
* Days (``2024-05-20``), times (``06:00:00``, ``+1`` for the next day) and instants (``2024-05-15T15:00:00``) are
  kept as the ISO text of the data: compared as text they sort as time does, and export writes back what was loaded.
* A flight date's per-status fields (actual or estimated times; seats and prices per cabin) are nullable columns:
  which are set is fixed by the status (``STATUS_FIELDS``).
* ``seq`` columns keep the order of the document's lists and mappings, so ``export`` writes back exactly what was
  loaded; ``user_seq`` is a reservation's place in its traveller's list.
* Identifiers compare byte-exactly on MariaDB too; a traveller's account and address are declared as every pack
  declares them (``chops.domain.columns``: ``name_key`` is indexed for "is this message about someone else?").
* Two things tau2's document has no place for, so ``export`` leaves them out (and a load starts them afresh): a
  reservation changed away from a delayed flight (``delay_rebooked``: a delay's compensation comes only after the
  change) and the compensation already given for a reservation (``compensation``: at most one).
"""

from __future__ import annotations

import sqlalchemy as sa

from chops.domain.columns import ADDRESS, account, address, key, listed_under

metadata = sa.MetaData()

Money = sa.Numeric(12, 2)
CABINS = ("basic_economy", "economy", "business")
# A flight date's fields beside its status, by status, in db.json's key order.
STATUS_FIELDS = {
    "available": ("available_seats", "prices"),
    "delayed": ("estimated_departure_time_est", "estimated_arrival_time_est"),
    "on time": ("estimated_departure_time_est", "estimated_arrival_time_est"),
    "flying": ("actual_departure_time_est", "estimated_arrival_time_est"),
    "landed": ("actual_departure_time_est", "actual_arrival_time_est"),
    "cancelled": (),
}
TIMES = ("actual_departure_time_est", "actual_arrival_time_est", "estimated_departure_time_est",
         "estimated_arrival_time_est")
ADDRESS_KEYS = tuple(ADDRESS)


def _text(name: str, length: int, **kwargs) -> sa.Column:
    return sa.Column(name, sa.String(length), nullable=False, **kwargs)


def _person() -> list[sa.Column]:
    """A passenger's name and date of birth, as reservations and saved passengers hold them."""
    return [_text("first_name", 64), _text("last_name", 64), _text("dob", 10)]


def _route() -> list[sa.Column]:
    return [_text("origin", 3), _text("destination", 3)]


flight = sa.Table(
    "airline_flight", metadata,
    key("flight_number", primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    *_route(),
    _text("scheduled_departure_time_est", 16),
    _text("scheduled_arrival_time_est", 16),
    sa.Index("ix_airline_flight_route", "origin", "destination"),
)

flight_date = sa.Table(
    "airline_flight_date", metadata,
    key("flight_number", sa.ForeignKey("airline_flight.flight_number"), primary_key=True),
    sa.Column("date", sa.String(10), primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    _text("status", 16),
    *(sa.Column(name, sa.String(19), nullable=True) for name in TIMES),
    *(sa.Column(f"seats_{cabin}", sa.Integer, nullable=True) for cabin in CABINS),
    *(sa.Column(f"price_{cabin}", Money, nullable=True) for cabin in CABINS),
    sa.Index("ix_airline_flight_date_day", "date", "status"),
)

user = sa.Table(
    "airline_user", metadata,
    *account("airline_user"),
    _text("dob", 10),
    _text("membership", 16),
    *address(),
)

payment_method = sa.Table(
    "airline_payment_method", metadata,
    key("user_id", sa.ForeignKey("airline_user.user_id"), primary_key=True),
    key("payment_id", primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    _text("source", 16),
    sa.Column("brand", sa.String(32), nullable=True),
    sa.Column("last_four", sa.String(4), nullable=True),
    sa.Column("amount", Money, nullable=True),  # a gift card's or certificate's balance
)

saved_passenger = sa.Table("airline_saved_passenger", metadata, *listed_under("airline_user.user_id"), *_person())

reservation = sa.Table(
    "airline_reservation", metadata,
    key("reservation_id", primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    key("user_id", sa.ForeignKey("airline_user.user_id"), nullable=False),
    sa.Column("user_seq", sa.Integer, nullable=False),
    *_route(),
    _text("flight_type", 16),
    _text("cabin", 16),
    _text("created_at", 19),
    sa.Column("total_baggages", sa.Integer, nullable=False),
    sa.Column("nonfree_baggages", sa.Integer, nullable=False),
    _text("insurance", 3),
    sa.Column("status", sa.String(16), nullable=True),  # None until cancelled (db.json has no status)
    sa.Column("delay_rebooked", sa.Boolean, nullable=True),
    sa.Index("ix_airline_reservation_user", "user_id", "user_seq"),
)

IN_RESERVATION = "airline_reservation.reservation_id"
reservation_flight = sa.Table(
    "airline_reservation_flight", metadata, *listed_under(IN_RESERVATION),
    key("flight_number", nullable=False), _text("date", 10), *_route(), sa.Column("price", Money, nullable=False),
)
passenger = sa.Table("airline_passenger", metadata, *listed_under(IN_RESERVATION), *_person())
payment = sa.Table(
    "airline_payment", metadata, *listed_under(IN_RESERVATION),
    key("payment_id", nullable=False),  # a used certificate is deleted from the profile; its payment stays
    sa.Column("amount", Money, nullable=False),
)

compensation = sa.Table(
    "airline_compensation", metadata,
    key("reservation_id", sa.ForeignKey(IN_RESERVATION), primary_key=True),
    _text("disruption", 16),
    key("payment_id", nullable=False),
    sa.Column("amount", Money, nullable=False),
)

# Parents first: inserts go in this order, deletes in reverse.
TABLES = (flight, flight_date, user, payment_method, saved_passenger, reservation, reservation_flight, passenger,
          payment, compensation)
