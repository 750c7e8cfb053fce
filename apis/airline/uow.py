"""The airline's unit of work (cosmicpython style, ``chops.domain.uow.SqlUnitOfWork``): ``with uow:`` opens a
transaction, ``uow.commit()`` commits, and leaving the block without a commit rolls back, so a dry run is the same
code without the commit. A write unit of work locks what it reads (the traveller, the reservation, the payment
methods and flight dates an operation checks), so the checks stay true until the commit.
"""

from __future__ import annotations

import sqlalchemy as sa

from apis.airline import repositories as r
from chops.domain.outcomes import Change
from chops.domain.uow import SqlUnitOfWork


class AirlineUnitOfWork(SqlUnitOfWork):
    """One connection and one transaction, with the airline's repositories and the agent's audit log on it."""

    users: r.UserRepository
    payment_methods: r.PaymentMethodRepository
    flights: r.FlightRepository
    reservations: r.ReservationRepository

    def open_repositories(self, conn: sa.Connection, changes: list[Change], lock: bool) -> None:
        """The airline's repositories on the transaction's connection."""
        self.users = r.UserRepository(conn, changes, lock)
        self.payment_methods = r.PaymentMethodRepository(conn, changes, lock)
        self.flights = r.FlightRepository(conn, changes, lock)
        self.reservations = r.ReservationRepository(conn, changes, lock)
