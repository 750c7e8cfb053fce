"""The airline's db.json, typed and strict: the real one loads into SQLite and exports back unchanged (same keys in
the same order, money within half a cent; no reservation gains a ``status``), loading twice changes nothing, a
written state exports and loads back to itself, and a malformed document loads nothing."""

from __future__ import annotations

import json

import pytest

from apis.airline import loader
from apis.airline.pack import pack
from chops.db import make_engine
from tests.unit.airline_support import AVA, BO, demo_airline, differences


def test_the_real_db_json_round_trips_on_sqlite(airline_dir, sqlite_url):
    engine = make_engine(sqlite_url)
    original = json.loads((airline_dir / "database" / "db.json").read_text())
    counts = pack.load(engine, airline_dir)
    assert counts["airline_reservation"] == len(original["reservations"]) == 2000
    assert counts["airline_flight_date"] == sum(len(f["dates"]) for f in original["flights"].values())
    exported = pack.export(engine)
    assert differences(original, exported) == []
    assert not any("status" in r for r in exported["reservations"].values())
    assert pack.load(engine, airline_dir) == counts and differences(original, pack.export(engine)) == []
    engine.dispose()


def test_a_written_state_exports_and_loads_back_to_itself(sqlite_url, tmp_path):
    engine, api = demo_airline(sqlite_url)
    assert api.call("cancel_reservation", BO, {"reservation_id": "DMRCNT", "reason": "change_of_plan"}).committed
    assert api.call("book_reservation", AVA, {
        "origin": "BOS", "destination": "ORD", "flight_type": "one_way", "cabin": "economy",
        "flights": [{"flight_number": "DEM101", "date": "2024-05-17"}],
        "passengers": [{"first_name": "Ava", "last_name": "Marchetti", "dob": "1985-02-11"}],
        "payment_methods": [{"payment_id": "certificate_ava2", "amount": 75}, {"payment_id": "gift_card_ava",
                                                                               "amount": 96}],
        "total_baggages": 0, "insurance": "no"}).committed
    written = pack.export(engine)
    assert written["reservations"]["DMRCNT"]["status"] == "cancelled"
    assert "certificate_ava2" not in written["users"][AVA]["payment_methods"]
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / "db.json").write_text(json.dumps(written))
    second = make_engine(f"sqlite:///{tmp_path / 'copy.db'}")
    pack.load(second, tmp_path / "dump")
    assert differences(written, pack.export(second)) == []
    engine.dispose()
    second.dispose()


@pytest.mark.parametrize("breakage,words", [
    (lambda d: d["reservations"]["DMBASC"].update(user_id="bo_demo"), "not in the reservations list"),
    (lambda d: d["users"]["ava_demo"]["reservations"].append("NOSUCH"), "do not exist"),
    (lambda d: d["reservations"]["DMBASC"].update(seat="12A"), "seat"),
    (lambda d: d["flights"]["DEM101"]["dates"]["2024-05-16"].pop("prices"), "available"),
    (lambda d: d["users"]["bo_demo"]["payment_methods"]["gift_card_bo"].pop("amount"), "gift card"),
    (lambda d: d["reservations"]["DMBASC"]["flights"][0].update(date="2024-06-01"), "which is none"),
])
def test_a_malformed_document_loads_nothing(sqlite_url, tmp_path, breakage, words):
    engine, _ = demo_airline(sqlite_url)
    before = pack.export(engine)
    doc = json.loads(json.dumps(before))
    breakage(doc)
    (tmp_path / "db.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=words):
        pack.load(engine, tmp_path)
    assert pack.export(engine) == before
    engine.dispose()


def test_a_folder_without_db_json_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="airline"):
        loader.read_document(tmp_path)
