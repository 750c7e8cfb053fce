"""Load and export the airline: tau2's ``db.json`` in, the same document out (``STORE``, a
``chops.domain.document.DocumentStore``: ``load`` replaces every ``airline_*`` row in ONE transaction with bulk
inserts, loading twice gives the same rows).

What is the airline's own: the rows of each table for a document (``document_rows``), and the document of the rows
(``_document``), in exactly db.json's shape: the same keys in the same order, a flight date's fields by its status,
whole-dollar amounts as integers, balances as floats, and a reservation's ``status`` only once it is set (db.json has
none; tau2 adds it on a cancellation).
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from apis.airline import tables as t
from apis.airline.document import Document
from chops import migrate
from chops.domain import document as kit
from chops.domain.document import grouped, money, name_key

MIGRATIONS = Path(__file__).resolve().with_name("migrations")  # the airline_* tables' history (versions/ only)
Row = dict[str, Any]


def create_schema(engine: sa.Engine) -> None:
    """The ``airline_*`` tables and the agent's own ``chops_*`` tables, created or brought up to date by their
    migrations (what ``chops db upgrade --domain airline`` runs; idempotent)."""
    migrate.upgrade_histories(engine, (migrate.AGENT, migrate.pack_history("airline", t.metadata, MIGRATIONS)))


def document_rows(doc: Document) -> dict[sa.Table, list[Row]]:
    """The rows of every ``airline_*`` table for ``doc``."""
    rows: dict[sa.Table, list[Row]] = {table: [] for table in t.TABLES}
    for seq, f in enumerate(doc.flights.values()):
        rows[t.flight].append({"seq": seq, **f.model_dump(exclude={"dates"})})
        for i, (day, d) in enumerate(f.dates.items()):
            row = {"flight_number": f.flight_number, "date": day, "seq": i, "status": d.status,
                   **{k: getattr(d, k) for k in t.TIMES}}
            for cabin in t.CABINS:
                row[f"seats_{cabin}"] = getattr(d.available_seats, cabin) if d.available_seats else None
                row[f"price_{cabin}"] = getattr(d.prices, cabin) if d.prices else None
            rows[t.flight_date].append(row)
    user_seq: dict[str, int] = {}
    for seq, u in enumerate(doc.users.values()):
        first, last = u.name.first_name, u.name.last_name
        rows[t.user].append({"user_id": u.user_id, "seq": seq, "first_name": first, "last_name": last,
                             "name_key": name_key(first, last), "email": u.email, "dob": u.dob,
                             "membership": u.membership, **u.address.model_dump()})
        owner = {"user_id": u.user_id}
        rows[t.payment_method] += [{**owner, "payment_id": m.id, "seq": i, "source": m.source, "brand": m.brand,
                                    "last_four": m.last_four, "amount": m.amount}
                                   for i, m in enumerate(u.payment_methods.values())]
        rows[t.saved_passenger] += [{**owner, "seq": i, **p.model_dump()} for i, p in enumerate(u.saved_passengers)]
        user_seq.update((rid, i) for i, rid in enumerate(u.reservations))
    for seq, r in enumerate(doc.reservations.values()):
        rows[t.reservation].append({"seq": seq, "user_seq": user_seq[r.reservation_id], "delay_rebooked": None,
                                    **r.model_dump(exclude={"flights", "passengers", "payment_history"})})
        key = {"reservation_id": r.reservation_id}
        rows[t.reservation_flight] += [{**key, "seq": i, **f.model_dump()} for i, f in enumerate(r.flights)]
        rows[t.passenger] += [{**key, "seq": i, **p.model_dump()} for i, p in enumerate(r.passengers)]
        rows[t.payment] += [{**key, "seq": i, **p.model_dump()} for i, p in enumerate(r.payment_history)]
    return rows


def whole(value: Decimal) -> int | float:
    """A fare, seat price or payment as the data writes it: an integer when whole dollars (all of db.json's are),
    else a float to the cent."""
    return int(value) if value == value.to_integral_value() else float(value)


def flight_date_view(d: Row) -> Row:
    """A flight date in db.json's shape: its status, then that status's fields in their order."""
    out: Row = {"status": d["status"]}
    for field in t.STATUS_FIELDS[d["status"]]:
        if field == "available_seats":
            out[field] = {c: d[f"seats_{c}"] for c in t.CABINS}
        elif field == "prices":
            out[field] = {c: whole(d[f"price_{c}"]) for c in t.CABINS}
        else:
            out[field] = d[field]
    return out


def _document(rows: Any) -> dict[str, Any]:
    dates = grouped(rows(t.flight_date, "flight_number", "seq"), "flight_number")
    flights = {f["flight_number"]: {
        **{k: f[k] for k in ("origin", "destination", "flight_number", "scheduled_departure_time_est",
                             "scheduled_arrival_time_est")},
        "dates": {d["date"]: flight_date_view(d) for d in dates[f["flight_number"]]}} for f in rows(t.flight, "seq")}
    methods = grouped(rows(t.payment_method, "user_id", "seq"), "user_id")
    saved = grouped(rows(t.saved_passenger, "user_id", "seq"), "user_id")
    owned = grouped(rows(t.reservation, "user_id", "user_seq"), "user_id")
    users = {u["user_id"]: {
        "user_id": u["user_id"], "name": {"first_name": u["first_name"], "last_name": u["last_name"]},
        "address": {k: u[k] for k in t.ADDRESS_KEYS}, "email": u["email"], "dob": u["dob"],
        "payment_methods": {m["payment_id"]: method_document(m) for m in methods[u["user_id"]]},
        "saved_passengers": [_person(p) for p in saved[u["user_id"]]], "membership": u["membership"],
        "reservations": [r["reservation_id"] for r in owned[u["user_id"]]]} for u in rows(t.user, "seq")}
    legs = grouped(rows(t.reservation_flight, "reservation_id", "seq"), "reservation_id")
    people = grouped(rows(t.passenger, "reservation_id", "seq"), "reservation_id")
    paid = grouped(rows(t.payment, "reservation_id", "seq"), "reservation_id")
    reservations = {}
    for r in rows(t.reservation, "seq"):
        rid = r["reservation_id"]
        reservations[rid] = {
            **{k: r[k] for k in ("reservation_id", "user_id", "origin", "destination", "flight_type", "cabin")},
            "flights": [{**{k: f[k] for k in ("origin", "destination", "flight_number", "date")},
                         "price": whole(f["price"])} for f in legs[rid]],
            "passengers": [_person(p) for p in people[rid]],
            "payment_history": [{"payment_id": p["payment_id"], "amount": whole(p["amount"])} for p in paid[rid]],
            **{k: r[k] for k in ("created_at", "total_baggages", "nonfree_baggages", "insurance")}}
        if r["status"] is not None:
            reservations[rid]["status"] = r["status"]
    return {"flights": flights, "users": users, "reservations": reservations}


def method_document(m: Row) -> Row:
    """A payment method in db.json's shape: a card's brand and last four digits, a balance as a float."""
    out: Row = {"source": m["source"], "id": m["payment_id"]}
    if m["source"] == "credit_card":
        out.update(brand=m["brand"], last_four=m["last_four"])
    else:
        out["amount"] = money(m["amount"])
    return out


def _person(p: Row) -> Row:
    return {"first_name": p["first_name"], "last_name": p["last_name"], "dob": p["dob"]}


STORE = kit.DocumentStore("airline (tau2-airline)", Document, t.TABLES, document_rows, _document, create_schema)
read_document, replace_rows, load, export = STORE.read, STORE.replace, STORE.load, STORE.export
