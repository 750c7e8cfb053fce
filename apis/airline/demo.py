"""A small made-up demo airline (our own data, not the tau2 airline's) for ``chops db seed-demo`` with
``CHOPS_DOMAIN=airline`` and the pack's tests: four airports, eight flights over 2024-05-14 … 05-20 (around the
airline's "now", 2024-05-15 15:00), three travellers (gold, regular, silver) and reservations in every state the
policy's checks tell apart: booked within 24 hours, basic economy, insured, business, partly flown, with a flight the
airline cancelled and with a delayed one.
"""

from __future__ import annotations

from typing import Any

from apis.airline.document import Document

DAYS = [f"2024-05-{d}" for d in range(14, 21)]

# flight number: (origin, destination, departs, arrives, base fare for economy)
FLIGHTS = {
    "DEM101": ("BOS", "ORD", "08:00:00", "10:00:00", 120),
    "DEM102": ("ORD", "BOS", "12:00:00", "15:00:00", 110),
    "DEM201": ("ORD", "DEN", "11:00:00", "13:00:00", 140),
    "DEM202": ("DEN", "ORD", "16:00:00", "19:00:00", 150),
    "DEM301": ("BOS", "DEN", "07:00:00", "10:30:00", 210),
    "DEM302": ("DEN", "BOS", "12:00:00", "17:30:00", 200),
    "DEM401": ("DEN", "SEA", "22:00:00", "00:30:00+1", 160),
    "DEM402": ("SEA", "DEN", "06:00:00", "09:30:00", 170),
}
# The dates that are not simply available: past ones landed, today's under way or waiting, a few cancelled.
EXCEPTIONS = {
    ("DEM101", "2024-05-14"): {"status": "landed", "actual_departure_time_est": "2024-05-14T08:05:00",
                               "actual_arrival_time_est": "2024-05-14T09:58:00"},
    ("DEM101", "2024-05-15"): {"status": "flying", "actual_departure_time_est": "2024-05-15T14:10:00",
                               "estimated_arrival_time_est": "2024-05-15T16:05:00"},
    ("DEM301", "2024-05-15"): {"status": "delayed", "estimated_departure_time_est": "2024-05-15T19:40:00",
                               "estimated_arrival_time_est": "2024-05-15T23:10:00"},
    ("DEM302", "2024-05-15"): {"status": "on time", "estimated_departure_time_est": "2024-05-15T17:00:00",
                               "estimated_arrival_time_est": "2024-05-15T22:30:00"},
    ("DEM201", "2024-05-16"): {"status": "cancelled"},
}
FEW_SEATS = {("DEM302", "2024-05-20"): {"basic_economy": 4, "economy": 3, "business": 1}}


def _date(number: str, day: str) -> dict[str, Any]:
    if (number, day) in EXCEPTIONS:
        return EXCEPTIONS[(number, day)]
    if day < "2024-05-15":
        dep, arr = FLIGHTS[number][2:4]
        return {"status": "landed", "actual_departure_time_est": f"{day}T{dep}",
                "actual_arrival_time_est": f"{day}T{arr.removesuffix('+1')}"}
    fare = FLIGHTS[number][4] + 3 * int(day[-2:])
    return {"status": "available",
            "available_seats": FEW_SEATS.get((number, day), {"basic_economy": 9, "economy": 12, "business": 5}),
            "prices": {"basic_economy": fare - 40, "economy": fare, "business": fare * 3}}


def _flight(number: str) -> dict[str, Any]:
    origin, destination, dep, arr, _ = FLIGHTS[number]
    return {"origin": origin, "destination": destination, "flight_number": number,
            "scheduled_departure_time_est": dep, "scheduled_arrival_time_est": arr,
            "dates": {day: _date(number, day) for day in DAYS}}


def _leg(number: str, day: str, cabin: str) -> dict[str, Any]:
    origin, destination = FLIGHTS[number][:2]
    fare = _date(number, day).get("prices", {}).get(cabin, FLIGHTS[number][4])  # a past date: its base fare
    return {"origin": origin, "destination": destination, "flight_number": number, "date": day, "price": fare}


PEOPLE = {"ava": ("Ava", "Marchetti", "1985-02-11"), "leo": ("Leo", "Marchetti", "2012-07-30"),
          "bo": ("Bo", "Lindgren", "1979-09-04"), "cy": ("Cy", "Okonkwo", "1991-12-19"),
          "mae": ("Mae", "Okonkwo", "1993-03-08")}


def _person(key: str) -> dict[str, str]:
    first, last, dob = PEOPLE[key]
    return {"first_name": first, "last_name": last, "dob": dob}


def _reservation(rid: str, user: str, trip: tuple[str, str, str], cabin: str, legs: list[tuple[str, str]],
                 people: list[str], method: str, created: str, insurance: str = "no", bags: int = 0) -> dict[str, Any]:
    flights = [_leg(n, d, cabin) for n, d in legs]
    total = sum(f["price"] for f in flights) * len(people) + (30 * len(people) if insurance == "yes" else 0)
    return {"reservation_id": rid, "user_id": user, "origin": trip[0], "destination": trip[1], "flight_type": trip[2],
            "cabin": cabin, "flights": flights, "passengers": [_person(p) for p in people],
            "payment_history": [{"payment_id": method, "amount": total}], "created_at": created,
            "total_baggages": bags, "nonfree_baggages": 0, "insurance": insurance}


RESERVATIONS = [
    # ava_demo (gold)
    _reservation("DMBASC", "ava_demo", ("BOS", "DEN", "round_trip"), "basic_economy",
                 [("DEM301", "2024-05-17"), ("DEM302", "2024-05-20")], ["ava"], "credit_card_ava",
                 "2024-05-01T10:00:00"),
    _reservation("DMFLWN", "ava_demo", ("BOS", "ORD", "round_trip"), "business",
                 [("DEM101", "2024-05-14"), ("DEM102", "2024-05-19")], ["ava", "leo"], "gift_card_ava",
                 "2024-05-02T08:30:00", bags=2),
    _reservation("DMECON", "ava_demo", ("BOS", "DEN", "one_way"), "economy", [("DEM301", "2024-05-18")],
                 ["ava", "leo"], "credit_card_ava", "2024-05-05T12:00:00", bags=3),
    # bo_demo (regular)
    _reservation("DMRCNT", "bo_demo", ("BOS", "ORD", "one_way"), "economy", [("DEM101", "2024-05-18")], ["bo"],
                 "credit_card_bo", "2024-05-15T09:00:00"),
    _reservation("DMOLDE", "bo_demo", ("ORD", "BOS", "one_way"), "economy", [("DEM102", "2024-05-19")], ["bo"],
                 "gift_card_bo", "2024-05-02T16:45:00"),
    _reservation("DMBOCX", "bo_demo", ("ORD", "DEN", "one_way"), "economy", [("DEM201", "2024-05-16")], ["bo"],
                 "credit_card_bo", "2024-05-03T07:15:00"),
    # cy_demo (silver)
    _reservation("DMINSR", "cy_demo", ("DEN", "ORD", "one_way"), "economy", [("DEM202", "2024-05-18")], ["cy"],
                 "credit_card_cy", "2024-05-03T18:20:00", insurance="yes"),
    _reservation("DMCYCX", "cy_demo", ("ORD", "DEN", "one_way"), "economy", [("DEM201", "2024-05-16")], ["cy", "mae"],
                 "credit_card_cy", "2024-05-04T11:00:00"),
    _reservation("DMDLAY", "cy_demo", ("BOS", "DEN", "one_way"), "economy", [("DEM301", "2024-05-15")], ["cy"],
                 "credit_card_cy", "2024-05-06T09:30:00", insurance="yes"),
    _reservation("DMBUSN", "cy_demo", ("SEA", "DEN", "one_way"), "business", [("DEM402", "2024-05-19")], ["cy"],
                 "gift_card_cy", "2024-05-07T14:00:00"),
]


def _card(pid: str, brand: str, last_four: str) -> dict[str, Any]:
    return {"source": "credit_card", "id": pid, "brand": brand, "last_four": last_four}


def _balance(pid: str, amount: float) -> dict[str, Any]:
    return {"source": "gift_card" if pid.startswith("gift") else "certificate", "id": pid, "amount": amount}


def _user(uid: str, person: str, membership: str, methods: list[dict[str, Any]], saved: list[str],
          city: tuple[str, str, str]) -> dict[str, Any]:
    first, last, dob = PEOPLE[person]
    return {"user_id": uid, "name": {"first_name": first, "last_name": last},
            "address": {"address1": f"{10 + len(uid)} Demo Street", "address2": "", "city": city[0],
                        "country": "USA", "state": city[1], "zip": city[2]},
            "email": f"{first.lower()}.{last.lower()}@example.com", "dob": dob,
            "payment_methods": {m["id"]: m for m in methods}, "saved_passengers": [_person(p) for p in saved],
            "membership": membership,
            "reservations": [r["reservation_id"] for r in RESERVATIONS if r["user_id"] == uid]}


USERS = [
    _user("ava_demo", "ava", "gold", [_card("credit_card_ava", "visa", "4242"), _balance("gift_card_ava", 300.0),
                                      _balance("certificate_ava", 150.0), _balance("certificate_ava2", 75.0),
                                      _balance("gift_card_ava2", 20.5), _balance("gift_card_ava3", 10.0),
                                      _balance("gift_card_ava4", 5.0)], ["leo"], ("Boston", "MA", "02110")),
    _user("bo_demo", "bo", "regular", [_card("credit_card_bo", "mastercard", "5100"), _balance("gift_card_bo", 25.0)],
          [], ("Chicago", "IL", "60601")),
    _user("cy_demo", "cy", "silver", [_card("credit_card_cy", "amex", "0005"), _balance("certificate_cy", 100.0),
                                      _balance("gift_card_cy", 400.0)], ["mae"], ("Denver", "CO", "80202")),
]


def demo_document() -> Document:
    """The demo airline as a checked db.json document."""
    doc = Document.model_validate({"flights": {n: _flight(n) for n in FLIGHTS},
                                   "users": {u["user_id"]: u for u in USERS},
                                   "reservations": {r["reservation_id"]: r for r in RESERVATIONS}})
    doc.check()
    return doc
