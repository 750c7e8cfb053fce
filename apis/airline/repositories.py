"""SQL repositories of the airline over the unit of work's connection (``chops.domain.repository.SqlRepository``:
bound parameters only, reads that lock in a write unit of work, every write recorded as row-level ``Change``s).

A reservation's lists (flights, passengers) are replaced whole, as tau2's writes replace them; each replacement is
recorded as ONE change of the reservation's field as db.json names it (``flights``, ``passengers``): the diff speaks
of the reservation, not of list rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import sqlalchemy as sa

from apis.airline import tables as t
from chops.domain.outcomes import Change
from chops.domain.repository import AccountRepository, Row, SqlRepository

PERSON = ("first_name", "last_name", "dob")
LEG = ("flight_number", "date", "origin", "destination", "price")


class UserRepository(AccountRepository):
    """Travellers (``airline_user``: ``get`` one, the ones ``named``) and their saved passengers."""

    table = t.user

    def saved_passengers(self, user_id: str) -> list[Row]:
        """The passengers the traveller saved, in their order."""
        sp = t.saved_passenger
        return self._rows(sa.select(sp).where(sp.c.user_id == user_id).order_by(sp.c.seq))


class PaymentMethodRepository(SqlRepository):
    """Travellers' credit cards, gift cards and certificates (``airline_payment_method``)."""

    def of_user(self, user_id: str) -> list[Row]:
        """The traveller's payment methods in their order (locked in a write unit of work)."""
        pm = t.payment_method
        return self._rows(sa.select(pm).where(pm.c.user_id == user_id).order_by(pm.c.seq), lock=True)

    def set_amount(self, method: Row, amount: Decimal) -> None:
        """Set a gift card's balance."""
        self._update(t.payment_method, {"user_id": method["user_id"], "payment_id": method["payment_id"]}, method,
                     {"amount": amount})

    def remove(self, method: Row) -> None:
        """Delete a payment method (a certificate used for a booking: what it did not pay is not refunded)."""
        self._delete(t.payment_method, {"user_id": method["user_id"], "payment_id": method["payment_id"]}, method)

    def add_certificate(self, user_id: str, payment_id: str, amount: Decimal) -> Row:
        """Give the traveller a new certificate, last in their list."""
        pm = t.payment_method
        last = self.conn.execute(sa.select(sa.func.max(pm.c.seq)).where(pm.c.user_id == user_id)).scalar()
        row = {"user_id": user_id, "payment_id": payment_id, "seq": (last if last is not None else -1) + 1,
               "source": "certificate", "brand": None, "last_four": None, "amount": amount}
        self._insert(pm, ("user_id", "payment_id"), row)
        return row


class FlightRepository(SqlRepository):
    """Flights and their dates (public: no traveller owns them)."""

    def date(self, flight_number: str, day: str) -> Row | None:
        """The flight on ``day`` with its route and schedule (locked in a write unit of work: its seats)."""
        f, d = t.flight, t.flight_date
        stmt = (sa.select(d, f.c.origin, f.c.destination, f.c.scheduled_departure_time_est,
                          f.c.scheduled_arrival_time_est).join(f, f.c.flight_number == d.c.flight_number)
                .where(d.c.flight_number == flight_number, d.c.date == day))
        return self._one(stmt, lock=True)

    def exists(self, flight_number: str) -> bool:
        """Whether ``flight_number`` is one of the airline's flights."""
        return self._one(sa.select(t.flight.c.flight_number).where(t.flight.c.flight_number == flight_number)) \
            is not None

    def statuses(self, legs: Sequence[Row]) -> dict[tuple[str, str], str]:
        """The status of each ``(flight_number, date)`` of ``legs`` (a reservation's flights)."""
        if not legs:
            return {}
        d = t.flight_date
        numbers, days = sorted({x["flight_number"] for x in legs}), sorted({x["date"] for x in legs})
        stmt = sa.select(d.c.flight_number, d.c.date, d.c.status).where(d.c.flight_number.in_(numbers),
                                                                       d.c.date.in_(days))
        return {(r["flight_number"], r["date"]): r["status"] for r in self._rows(stmt)}

    def available(self, day: str, origin: str, destination: str | None = None) -> list[Row]:
        """The flights from ``origin`` (to ``destination``, when given) that can be booked on ``day``, in the
        flights' order: an indexed look-up by route, then by day."""
        f, d = t.flight, t.flight_date
        stmt = (sa.select(f, *(d.c[c] for c in d.c.keys() if c.startswith(("seats_", "price_"))))
                .join(d, d.c.flight_number == f.c.flight_number)
                .where(f.c.origin == origin, d.c.date == day, d.c.status == "available").order_by(f.c.seq))
        if destination is not None:
            stmt = stmt.where(f.c.destination == destination)
        return self._rows(stmt)

    def airports(self) -> list[str]:
        """Every airport a flight leaves from or flies to, in alphabetical order."""
        routes = self._rows(sa.select(t.flight.c.origin, t.flight.c.destination).distinct())
        return sorted({r["origin"] for r in routes} | {r["destination"] for r in routes})

    def take_seats(self, day: Row, cabin: str, count: int) -> None:
        """Take ``count`` seats of ``cabin`` on a flight date (``day``: a row of ``date``)."""
        self._update(t.flight_date, {"flight_number": day["flight_number"], "date": day["date"]}, day,
                     {f"seats_{cabin}": day[f"seats_{cabin}"] - count})


class ReservationRepository(SqlRepository):
    """Reservations with their flights, passengers and payment history."""

    def summaries_of(self, user_id: str) -> list[Row]:
        """The traveller's reservations in their list's order, each with its ``flights`` (one join), for the profile."""
        r, f = t.reservation, t.reservation_flight
        rows = self._rows(sa.select(r.c.reservation_id, r.c.origin, r.c.destination, r.c.flight_type, r.c.cabin,
                                    r.c.status, f.c.flight_number, f.c.date)
                          .select_from(r.outerjoin(f, f.c.reservation_id == r.c.reservation_id))
                          .where(r.c.user_id == user_id).order_by(r.c.user_seq, f.c.seq))
        out: dict[str, Row] = {}
        for row in rows:
            summary = out.setdefault(row["reservation_id"], {**{k: row[k] for k in (
                "reservation_id", "origin", "destination", "flight_type", "cabin", "status")}, "flights": []})
            if row["flight_number"] is not None:
                summary["flights"].append({"flight_number": row["flight_number"], "date": row["date"]})
        return list(out.values())

    def get(self, reservation_id: str, user_id: str) -> Row | None:
        """Traveller ``user_id``'s reservation (locked in a write unit of work) with its ``flights``, ``passengers``
        and ``payments``; None when they hold no such reservation: another's is never even read."""
        r = t.reservation
        found = self._one(sa.select(r).where(r.c.reservation_id == reservation_id, r.c.user_id == user_id), lock=True)
        if found is None:
            return None
        for key, table in (("flights", t.reservation_flight), ("passengers", t.passenger), ("payments", t.payment)):
            found[key] = self._rows(sa.select(table).where(table.c.reservation_id == reservation_id)
                                    .order_by(table.c.seq))
        return found

    def taken(self, prefix: str) -> set[str]:
        """The reservation ids that start with ``prefix`` (new ids are made from one)."""
        r = t.reservation
        return {x["reservation_id"] for x in self._rows(sa.select(r.c.reservation_id)
                                                         .where(r.c.reservation_id.startswith(prefix)))}

    def add(self, values: Row, flights: list[Row], passengers: list[Row], payments: list[Row]) -> Row:
        """A new reservation, last in its traveller's list, with its flights, passengers and payments."""
        r = t.reservation
        last = self.conn.execute(sa.select(sa.func.max(r.c.user_seq)).where(r.c.user_id == values["user_id"])).scalar()
        seq = self.conn.execute(sa.select(sa.func.max(r.c.seq))).scalar()
        row = {**values, "seq": (seq if seq is not None else -1) + 1,
               "user_seq": (last if last is not None else -1) + 1, "status": None, "delay_rebooked": None}
        self._insert(r, ("reservation_id",), row)
        key = {"reservation_id": row["reservation_id"]}
        for table, items in ((t.reservation_flight, flights), (t.passenger, passengers), (t.payment, payments)):
            for i, item in enumerate(items):
                self._insert(table, ("reservation_id", "seq"), {**key, "seq": i, **item})
        return {**row, "flights": flights, "passengers": passengers, "payments": payments}

    def update(self, reservation: Row, values: Row) -> None:
        """Set fields of the reservation row (cabin, bags, status)."""
        self._update(t.reservation, {"reservation_id": reservation["reservation_id"]}, reservation, values)

    def add_payment(self, reservation: Row, payment_id: str, amount: Decimal) -> None:
        """Append a payment (negative: a refund) to the reservation's payment history."""
        row = {"reservation_id": reservation["reservation_id"], "seq": len(reservation["payments"]),
               "payment_id": payment_id, "amount": amount}
        self._insert(t.payment, ("reservation_id", "seq"), row)
        reservation["payments"].append(row)

    def replace_flights(self, reservation: Row, flights: list[Row]) -> None:
        """The reservation's flights become ``flights`` (each ``LEG``'s fields)."""
        self._replace(reservation, "flights", t.reservation_flight, LEG, flights)

    def replace_passengers(self, reservation: Row, passengers: list[Row]) -> None:
        """The reservation's passengers become ``passengers`` (first name, last name, date of birth each)."""
        self._replace(reservation, "passengers", t.passenger, PERSON, passengers)

    def _replace(self, reservation: Row, field: str, table: sa.Table, keys: tuple[str, ...], items: list[Row]) -> None:
        def plain(rows: list[Row]) -> list[Row]:
            return [{k: float(r[k]) if isinstance(r[k], Decimal) else r[k] for k in keys} for r in rows]

        before, after = plain(reservation[field]), plain(items)
        if before == after:
            return
        key = {"reservation_id": reservation["reservation_id"]}
        self.conn.execute(table.delete().where(table.c.reservation_id == key["reservation_id"]))
        self.conn.execute(table.insert(), [{**key, "seq": i, **{k: item[k] for k in keys}}
                                           for i, item in enumerate(items)])
        self.changes.append(Change(table=t.reservation.name, key=key, field=field, before=before, after=after))
        reservation[field] = [{**key, "seq": i, **{k: item[k] for k in keys}} for i, item in enumerate(items)]

    def compensated(self, reservation_id: str) -> Row | None:
        """The compensation already given for the reservation, if any."""
        c = t.compensation
        return self._one(sa.select(c).where(c.c.reservation_id == reservation_id), lock=True)

    def compensate(self, reservation: Row, disruption: str, payment_id: str, amount: Decimal) -> None:
        """Record the compensation given for the reservation (at most one: its primary key)."""
        self._insert(t.compensation, ("reservation_id",), {"reservation_id": reservation["reservation_id"],
                                                           "disruption": disruption, "payment_id": payment_id,
                                                           "amount": amount})
