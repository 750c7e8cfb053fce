"""Compact renderings of the airline's records for operation results: only the fields that matter, money as numbers
to the cent. The executor reads them in its next prompt, which clips each result: every character counts."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from apis.airline.airports import CITIES
from apis.airline.loader import whole
from apis.airline.tables import CABINS
from chops.domain.document import money

Row = dict[str, Any]


def usd(amount: Decimal | int | float) -> str:
    """``$1,234`` for whole dollars, ``$12.50`` otherwise (fares are whole dollars; balances are not)."""
    value = Decimal(str(amount))
    return f"${value:,.0f}" if value == value.to_integral_value() else f"${value:,.2f}"


def method_view(m: Row) -> Row:
    """A payment method: its id and kind, a gift card's or certificate's balance, a card's brand and last digits."""
    out: Row = {"id": m["payment_id"], "source": m["source"]}
    if m["amount"] is not None:
        out["balance"] = money(m["amount"])
    if m["brand"] is not None:
        out["card"] = f"{m['brand']} ending {m['last_four']}"
    return out


def person(p: Row) -> Row:
    """A passenger: first name, last name, date of birth."""
    return {"first_name": p["first_name"], "last_name": p["last_name"], "dob": p["dob"]}


def user_view(u: Row, methods: list[Row], saved: list[Row], reservation_ids: list[str]) -> Row:
    """A traveller's details: name, email, date of birth, membership, payment methods, saved passengers and
    reservation ids (newest last)."""
    return {"user_id": u["user_id"], "name": f"{u['first_name']} {u['last_name']}", "email": u["email"],
            "dob": u["dob"], "membership": u["membership"], "payment_methods": [method_view(m) for m in methods],
            "saved_passengers": [person(p) for p in saved], "reservations": reservation_ids}


def reservation_view(r: Row, statuses: dict[tuple[str, str], str] | None = None) -> Row:
    """A reservation: route, trip type, cabin, flights (each with its price and, when known, its status today),
    passengers, payments, bags, insurance, when it was booked, and ``status`` once cancelled. The fare total is
    given (what a cabin change or a cancellation starts from: a small model adds prices badly)."""
    per_passenger = sum((f["price"] for f in r["flights"]), Decimal(0))
    flights = []
    for f in r["flights"]:
        leg: Row = {"flight_number": f["flight_number"], "date": f["date"], "origin": f["origin"],
                    "destination": f["destination"], "price": whole(f["price"])}
        if statuses and (f["flight_number"], f["date"]) in statuses:
            leg["status"] = statuses[(f["flight_number"], f["date"])]
        flights.append(leg)
    out: Row = {
        "reservation_id": r["reservation_id"], "origin": r["origin"], "destination": r["destination"],
        "flight_type": r["flight_type"], "cabin": r["cabin"], "flights": flights,
        "passengers": [person(p) for p in r["passengers"]],
        "fare_total": whole(per_passenger * len(r["passengers"])),
        "payments": [{"payment_id": p["payment_id"], "amount": whole(p["amount"])} for p in r["payments"]],
        "created_at": r["created_at"], "total_baggages": r["total_baggages"],
        "nonfree_baggages": r["nonfree_baggages"], "insurance": r["insurance"]}
    if r["status"] is not None:
        out["status"] = r["status"]
    return out


def flight_view(f: Row, day: str) -> Row:
    """A bookable flight on ``day``: number, route, scheduled times, seats left and price per cabin."""
    return {"flight_number": f["flight_number"], "date": day, "origin": f["origin"], "destination": f["destination"],
            "departure": f["scheduled_departure_time_est"], "arrival": f["scheduled_arrival_time_est"],
            "seats": {c: f[f"seats_{c}"] for c in CABINS}, "prices": {c: whole(f[f"price_{c}"]) for c in CABINS}}


def airport_view(code: str) -> Row:
    """An airport: its IATA code and its city."""
    return {"iata": code, "city": CITIES.get(code, code)}


def route_text(r: Row) -> str:
    """``JFK → SFO, round trip, business`` of a reservation (or a reservation summary)."""
    return f"{r['origin']} → {r['destination']}, {r['flight_type'].replace('_', ' ')}, {r['cabin'].replace('_', ' ')}"
