"""The airline pack on the real tau2-airline data and on real MariaDB (each test also runs on SQLite): db.json
round-trips, the booking tasks' reference writes end where tau2's tools end, travellers stay apart, and two
concurrent bookings cannot both spend one certificate."""

from __future__ import annotations

import copy
import json
import threading
import time

import pytest

from apis.airline.pack import pack
from apis.airline import tables as t
from apis.airline.service import AirlineApi
from apis.airline.uow import AirlineUnitOfWork
from chops.db import make_engine
from chops.domain.repository import named_query
from tests.unit.airline_support import AVA, as_call, demo_airline, differences, reference_writes, task_user, \
    tau2_applied


@pytest.fixture
def airline(db_url, airline_dir):
    """The real airline on an empty database of ``db_url``."""
    engine = make_engine(db_url)
    pack.load(engine, airline_dir)
    yield engine
    engine.dispose()


def test_db_json_round_trips_and_loading_twice_changes_nothing(airline, airline_dir):
    original = json.loads((airline_dir / "database" / "db.json").read_text())
    assert differences(original, pack.export(airline)) == []
    again = pack.load(airline, airline_dir)  # over the rows loaded already: replaced, not doubled
    assert (again["airline_user"], again["airline_reservation"]) == (len(original["users"]), 2000)
    assert differences(original, pack.export(airline)) == []


def test_the_booking_tasks_end_where_tau2_ends(airline, airline_dir):
    """Task 23: a cancellation, then three bookings (HATHAT, HATHAU, HATHAV) with a certificate each."""
    engine = airline
    original = json.loads((airline_dir / "database" / "db.json").read_text())
    task = next(t for t in json.loads((airline_dir / "tasks" / "train.json").read_text()) if t["id"] == "23")
    api, expected, user = pack.api(engine), copy.deepcopy(original), task_user(task)
    for action in reference_writes(task):
        name, args = as_call(action)
        result = api.call(name, user, args)
        assert result.committed, result.message
        tau2_applied(expected, user, action["name"], action["arguments"])
    exported = pack.export(engine)
    assert differences(expected, exported) == []
    assert [r for r in exported["reservations"] if r.startswith("HATHA")] == ["HATHAT", "HATHAU", "HATHAV"]


def test_travellers_of_the_real_airline_stay_apart(airline, airline_dir):
    engine = airline
    doc = json.loads((airline_dir / "database" / "db.json").read_text())
    owners = [u for u in doc["users"].values() if u["reservations"]][:2]
    api = AirlineApi(engine)
    mine, theirs = owners[0]["reservations"][0], owners[1]["reservations"][0]
    assert api.call("get_reservation_details", owners[0]["user_id"], {"reservation_id": mine}).outcome == "ok"
    other = api.call("get_reservation_details", owners[0]["user_id"], {"reservation_id": theirs})
    assert other.outcome == "not_in_system" and other.data is None
    cancel = api.call("cancel_reservation", owners[0]["user_id"], {"reservation_id": theirs, "reason": "health"})
    assert cancel.outcome == "not_in_system" and not cancel.diff
    names: dict[str, set[str]] = {}
    for u in doc["users"].values():
        names.setdefault(f"{u['name']['first_name']} {u['name']['last_name']}", set()).add(u["user_id"])
    shared = next(n for n, ids in names.items() if len(ids) > 1)
    assert {uid for uid, _ in api.people_named([shared.upper()])} == names[shared]
    if engine.dialect.name in ("mysql", "mariadb"):
        with engine.connect() as conn:
            query = named_query(t.user, [n.lower() for n in list(names)[:10]]).compile(
                conn, compile_kwargs={"literal_binds": True})
            [plan] = [dict(r._mapping) for r in conn.exec_driver_sql(f"EXPLAIN {query}")]
        assert plan["key"] == "ix_airline_user_name_key", plan


class SlowUnitOfWork(AirlineUnitOfWork):
    """Pauses after reading the traveller's payment methods, so two bookings overlap unless the first one's locks
    hold the second back (without them both would find the certificate)."""

    def __enter__(self) -> "SlowUnitOfWork":
        super().__enter__()
        read = self.payment_methods.of_user

        def slow(user_id: str) -> list[dict]:
            rows = read(user_id)
            time.sleep(0.3)
            return rows

        self.payment_methods.of_user = slow
        return self


def test_two_concurrent_bookings_cannot_both_spend_one_certificate(db_url):
    engine, _ = demo_airline(db_url)
    api = AirlineApi(engine, uow_factory=lambda write: SlowUnitOfWork(engine, write=write))
    barrier, results = threading.Barrier(2), {}

    def book(day: str, fare: int) -> None:
        barrier.wait()
        results[day] = api.call("book_reservation", AVA, {
            "origin": "BOS", "destination": "ORD", "flight_type": "one_way", "cabin": "economy",
            "flights": [{"flight_number": "DEM101", "date": day}],
            "passengers": [{"first_name": "Ava", "last_name": "Marchetti", "dob": "1985-02-11"}],
            "payment_methods": [{"payment_id": "certificate_ava", "amount": 150},
                                {"payment_id": "credit_card_ava", "amount": fare - 150}],
            "total_baggages": 0, "insurance": "no"})

    threads = [threading.Thread(target=book, args=a) for a in (("2024-05-17", 171), ("2024-05-18", 174))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    outcomes = sorted(r.outcome.value for r in results.values())
    assert outcomes == ["not_in_system", "ok"], [r.message for r in results.values()]
    assert "certificate_ava is not one of your payment methods" in next(
        r.message for r in results.values() if not r.committed)
    assert list(pack.export(engine)["reservations"]).count("HATHAT") == 1
    engine.dispose()
