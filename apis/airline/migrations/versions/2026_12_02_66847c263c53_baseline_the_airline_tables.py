"""Baseline: the airline's tables (``airline_*``) as the pack first declared them (December 2026).

Revision ID: 66847c263c53
Revises: nothing (the first revision)
Create Date: 2026-12-02 07:39:15.063771

Written by `chops db revision`, then written compactly by hand: the columns every table repeats (identifiers,
texts, a list's key under its parent) come from frozen helpers here, never from the live table modules, which move
on. The drift test proves it gives exactly the tables' metadata on SQLite and MariaDB.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = "66847c263c53"
down_revision = None
branch_labels = None
depends_on = None

TABLE_OPTIONS = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_unicode_ci"}
MONEY = sa.Numeric(precision=12, scale=2)
RESERVATION = "airline_reservation.reservation_id"


def _key(name: str, nullable: bool = False) -> sa.Column:
    """An identifier: a VARCHAR(64) compared byte-exactly on MySQL (``utf8mb4_bin``), as SQLite compares."""
    kind = sa.String(64).with_variant(mysql.VARCHAR(64, collation="utf8mb4_bin"), "mysql", "mariadb")
    return sa.Column(name, kind, nullable=nullable)


def _text(name: str, length: int, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.String(length), nullable=nullable)


def _int(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.Integer(), nullable=nullable)


def _table(name: str, *items: sa.schema.SchemaItem, key: tuple[str, ...], parent: str | None = None) -> None:
    """Create a table with its primary key ``key``; ``parent`` ("table.column"): its first key column refers to it."""
    refs = [sa.ForeignKeyConstraint([key[0]], [parent])] if parent else []
    op.create_table(name, *items, *refs, sa.PrimaryKeyConstraint(*key), **TABLE_OPTIONS)


def _listed(name: str, parent: str, *columns: sa.Column) -> None:
    """A table of a list's rows under their parent: the parent's id and ``seq``, the row's place in the list."""
    column = parent.split(".")[1]
    _table(name, _key(column), sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False), *columns,
           key=(column, "seq"), parent=parent)


def _person() -> list[sa.Column]:
    return [_text("first_name", 64), _text("last_name", 64), _text("dob", 10)]


def upgrade() -> None:
    """Create the airline's tables."""
    _table("airline_flight", _key("flight_number"), _int("seq"), _text("origin", 3), _text("destination", 3),
           _text("scheduled_departure_time_est", 16), _text("scheduled_arrival_time_est", 16), key=("flight_number",))
    op.create_index("ix_airline_flight_route", "airline_flight", ["origin", "destination"])
    _table("airline_user", _key("user_id"), _int("seq"), _text("first_name", 64), _text("last_name", 64),
           _text("name_key", 130), _text("email", 255), _text("dob", 10), _text("membership", 16),
           _text("address1", 255), _text("address2", 255), _text("city", 128), _text("country", 64),
           _text("state", 64), _text("zip", 32), key=("user_id",))
    op.create_index("ix_airline_user_name_key", "airline_user", ["name_key"])
    _table("airline_flight_date", _key("flight_number"), _text("date", 10), _int("seq"), _text("status", 16),
           *(_text(f"{kind}_{event}_time_est", 19, nullable=True) for kind, event in (
               ("actual", "departure"), ("actual", "arrival"), ("estimated", "departure"), ("estimated", "arrival"))),
           *(_int(f"seats_{cabin}", nullable=True) for cabin in ("basic_economy", "economy", "business")),
           *(sa.Column(f"price_{cabin}", MONEY, nullable=True) for cabin in ("basic_economy", "economy", "business")),
           key=("flight_number", "date"), parent="airline_flight.flight_number")
    op.create_index("ix_airline_flight_date_day", "airline_flight_date", ["date", "status"])
    _table("airline_payment_method", _key("user_id"), _key("payment_id"), _int("seq"), _text("source", 16),
           _text("brand", 32, nullable=True), _text("last_four", 4, nullable=True),
           sa.Column("amount", MONEY, nullable=True), key=("user_id", "payment_id"), parent="airline_user.user_id")
    _table("airline_reservation", _key("reservation_id"), _int("seq"), _key("user_id"), _int("user_seq"),
           _text("origin", 3), _text("destination", 3), _text("flight_type", 16), _text("cabin", 16),
           _text("created_at", 19), _int("total_baggages"), _int("nonfree_baggages"), _text("insurance", 3),
           _text("status", 16, nullable=True), sa.Column("delay_rebooked", sa.Boolean(), nullable=True),
           sa.ForeignKeyConstraint(["user_id"], ["airline_user.user_id"]), key=("reservation_id",))
    op.create_index("ix_airline_reservation_user", "airline_reservation", ["user_id", "user_seq"])
    _listed("airline_saved_passenger", "airline_user.user_id", *_person())
    _table("airline_compensation", _key("reservation_id"), _text("disruption", 16), _key("payment_id"),
           sa.Column("amount", MONEY, nullable=False), key=("reservation_id",), parent=RESERVATION)
    _listed("airline_passenger", RESERVATION, *_person())
    _listed("airline_payment", RESERVATION, _key("payment_id"), sa.Column("amount", MONEY, nullable=False))
    _listed("airline_reservation_flight", RESERVATION, _key("flight_number"), _text("date", 10), _text("origin", 3),
            _text("destination", 3), sa.Column("price", MONEY, nullable=False))


def downgrade() -> None:
    """Undo ``upgrade``: drop the tables, children first (their indexes go with them)."""
    for name in ("airline_reservation_flight", "airline_payment", "airline_passenger", "airline_compensation",
                 "airline_saved_passenger", "airline_reservation", "airline_payment_method", "airline_flight_date",
                 "airline_user", "airline_flight"):
        op.drop_table(name)
