"""Helpers of the airline pack's tests: the made-up demo airline on a fresh database, the one place tau2's reference
actions are turned into the pack's calls, an independent statement of what tau2's writes do to db.json (from the
data pack's README table, not from its code), and a comparison of two documents with money to half a cent."""

from __future__ import annotations

import copy
import re
from typing import Any

import sqlalchemy as sa

from apis.airline.pack import pack
from apis.airline.service import AirlineApi
from chops.db import make_engine

AVA, BO, CY = "ava_demo", "bo_demo", "cy_demo"  # gold, regular, silver
WRITES = {"book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_baggages",
          "update_reservation_passengers", "send_certificate"}
# A cancellation's reason, which tau2's cancel_reservation does not take: the scenario's where it states one (task 7:
# "You are sick"); task 39's MSJ4OA (economy, insured) has none the insurance covers, and its reference cancels it
# anyway (the data pack's README: the one train script that is not faithful), so a covered reason is assumed here.
REASONS = {"59XX6W": "health", "MSJ4OA": "health"}


def demo_airline(url: str) -> tuple[sa.Engine, AirlineApi]:
    """An engine on the demo airline (``apis.airline.demo``) and its Api."""
    engine = make_engine(url)
    pack.seed_demo(engine)
    return engine, pack.api(engine)


def task_user(task: dict[str, Any]) -> str:
    """The user id a task's scenario gives (every airline task's ``known_info`` holds it)."""
    return re.search(r"[a-z]+_[a-z]+_\d+", task["user_scenario"]["instructions"]["known_info"]).group(0)


def reference_writes(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's reference actions that write."""
    return [a for a in task["evaluation_criteria"]["actions"] or [] if a["name"] in WRITES]


def as_call(action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A tau2 reference action as the pack's call: ``user_id`` is the acting user (never an argument), and a
    cancellation carries its reason."""
    args = {k: v for k, v in action["arguments"].items() if k != "user_id"}
    if action["name"] == "cancel_reservation":
        args["reason"] = REASONS.get(args["reservation_id"], "change_of_plan")
    return action["name"], args


def tau2_applied(doc: dict[str, Any], user_id: str, name: str, args: dict[str, Any]) -> None:
    """What tau2's write ``name`` does to the document ``doc`` (in place), as the data pack's README states it."""
    db = doc
    if name == "cancel_reservation":
        r = db["reservations"][args["reservation_id"]]
        r["payment_history"] += [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in r["payment_history"]]
        r["status"] = "cancelled"
    elif name == "update_reservation_passengers":
        db["reservations"][args["reservation_id"]]["passengers"] = copy.deepcopy(args["passengers"])
    elif name == "update_reservation_baggages":
        r = db["reservations"][args["reservation_id"]]
        _charge(db, r, args["payment_id"], 50 * max(0, args["nonfree_baggages"] - r["nonfree_baggages"]))
        r["total_baggages"], r["nonfree_baggages"] = args["total_baggages"], args["nonfree_baggages"]
    elif name == "update_reservation_flights":
        r = db["reservations"][args["reservation_id"]]
        flights = []
        for f in args["flights"]:
            old = next((x for x in r["flights"] if (x["flight_number"], x["date"]) == (f["flight_number"], f["date"])
                        and args["cabin"] == r["cabin"]), None)
            flights.append(old or _leg(db, f, args["cabin"]))
        pax = len(r["passengers"])
        _charge(db, r, args["payment_id"], (sum(f["price"] for f in flights) - sum(f["price"] for f in r["flights"]))
                * pax)
        r["flights"], r["cabin"] = flights, args["cabin"]
    elif name == "book_reservation":
        rid = next(i for i in ("HATHAT", "HATHAU", "HATHAV") if i not in db["reservations"])
        pax = len(args["passengers"])
        flights = [_leg(db, f, args["cabin"]) for f in args["flights"]]
        for f in args["flights"]:
            db["flights"][f["flight_number"]]["dates"][f["date"]]["available_seats"][args["cabin"]] -= pax
        methods = db["users"][user_id]["payment_methods"]
        for p in args["payment_methods"]:
            if methods[p["payment_id"]]["source"] == "gift_card":
                methods[p["payment_id"]]["amount"] -= p["amount"]
            elif methods[p["payment_id"]]["source"] == "certificate":
                del methods[p["payment_id"]]
        db["reservations"][rid] = {
            "reservation_id": rid, "user_id": user_id, **{k: args[k] for k in ("origin", "destination", "flight_type",
                                                                              "cabin")},
            "flights": flights, "passengers": copy.deepcopy(args["passengers"]),
            "payment_history": copy.deepcopy(args["payment_methods"]), "created_at": "2024-05-15T15:00:00",
            **{k: args[k] for k in ("total_baggages", "nonfree_baggages", "insurance")}}
        db["users"][user_id]["reservations"].append(rid)
    else:
        raise AssertionError(f"no reference write {name} in the train tasks")


def _leg(db: dict[str, Any], f: dict[str, Any], cabin: str) -> dict[str, Any]:
    flight = db["flights"][f["flight_number"]]
    return {"origin": flight["origin"], "destination": flight["destination"], "flight_number": f["flight_number"],
            "date": f["date"], "price": flight["dates"][f["date"]]["prices"][cabin]}


def _charge(db: dict[str, Any], r: dict[str, Any], payment_id: str, amount: int) -> None:
    """A change's payment: appended when not zero; a gift card moves at once both ways."""
    method = db["users"][r["user_id"]]["payment_methods"][payment_id]
    if method["source"] == "gift_card":
        method["amount"] -= amount
    if amount:
        r["payment_history"].append({"payment_id": payment_id, "amount": amount})


def differences(a: Any, b: Any, path: str = "$") -> list[str]:
    """Where two documents differ: keys in another order, other values; numbers compared within half a cent."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return [f"{path}: keys {list(a)[:6]} vs {list(b)[:6]}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    if (abs(a - b) > 0.005) if numbers else (a != b):
        return [f"{path}: {a!r} vs {b!r}"]
    return []
