"""The train tasks' reference writes (tau2's names and arguments) replayed through the airline pack's Api on the real
db.json, each task on a freshly loaded database: every write passes the pack's policy checks and commits, and the
end state is what tau2's tools give (the data pack's README semantics, ``airline_support.tau2_applied``): the
exported document differs from db.json exactly for the 13 tasks with a reference write."""

from __future__ import annotations

import copy
import json
import shutil

import pytest

from apis.airline.pack import pack
from chops.db import make_engine
from tests.unit.airline_support import as_call, differences, reference_writes, task_user, tau2_applied


@pytest.fixture(scope="module")
def loaded(airline_dir, tmp_path_factory):
    """The real db.json loaded once into a SQLite file (copied for each task) and the document itself."""
    path = tmp_path_factory.mktemp("airline") / "base.db"
    engine = make_engine(f"sqlite:///{path}")
    pack.load(engine, airline_dir)
    engine.dispose()
    return path, json.loads((airline_dir / "database" / "db.json").read_text())


@pytest.fixture(scope="module")
def tasks(airline_dir):
    return json.loads((airline_dir / "tasks" / "train.json").read_text())


def replayed(loaded, tmp_path, task) -> tuple[dict, list]:
    """The exported document after the task's reference writes on a fresh copy of the database, and the results."""
    base, _ = loaded
    copy_path = tmp_path / f"task{task['id']}.db"
    shutil.copy(base, copy_path)
    engine = make_engine(f"sqlite:///{copy_path}")
    api = pack.api(engine)
    results = [api.call(name, task_user(task), args) for name, args in map(as_call, reference_writes(task))]
    out = pack.export(engine)
    engine.dispose()
    return out, results


def test_every_reference_write_commits_and_ends_where_tau2_ends(loaded, tasks, tmp_path):
    _, original = loaded
    changed = []
    for task in tasks:
        if not reference_writes(task):
            continue
        out, results = replayed(loaded, tmp_path, task)
        for action, result in zip(reference_writes(task), results):
            assert result.committed and result.outcome == "ok", (task["id"], action["name"], result.message)
        expected = copy.deepcopy(original)
        for action in reference_writes(task):
            tau2_applied(expected, task_user(task), action["name"], action["arguments"])
        assert differences(expected, out) == [], task["id"]
        assert differences(original, out), task["id"]
        changed.append(task["id"])
    assert len(changed) == 13, changed


def test_a_cancellation_refunds_every_payment_and_marks_the_reservation(loaded, tmp_path, tasks):
    task = next(t for t in tasks if t["id"] == "42")
    out, results = replayed(loaded, tmp_path, task)
    for rid in ("FDZ0T5", "HSR97W"):
        r = out["reservations"][rid]
        paid = [p for p in r["payment_history"] if p["amount"] > 0]
        assert r["payment_history"][len(paid):] == [{"payment_id": p["payment_id"], "amount": -p["amount"]}
                                                    for p in paid]
        assert list(r)[-1] == "status" and r["status"] == "cancelled"
    assert results[0].money == sum(p["amount"] for p in out["reservations"]["FDZ0T5"]["payment_history"]
                                   if p["amount"] > 0)


def test_a_booking_takes_seats_uses_the_certificate_and_debits_the_gift_cards(loaded, tmp_path, tasks):
    _, original = loaded
    task = next(t for t in tasks if t["id"] == "14")
    out, results = replayed(loaded, tmp_path, task)
    new = out["reservations"]["HATHAT"]
    assert new["created_at"] == "2024-05-15T15:00:00" and new["user_id"] == "mohamed_silva_9265"
    assert out["users"]["mohamed_silva_9265"]["reservations"][-1] == "HATHAT"
    for f in new["flights"]:
        before = original["flights"][f["flight_number"]]["dates"][f["date"]]["available_seats"]["business"]
        assert out["flights"][f["flight_number"]]["dates"][f["date"]]["available_seats"]["business"] == before - 3
    methods_before = original["users"]["mohamed_silva_9265"]["payment_methods"]
    methods = out["users"]["mohamed_silva_9265"]["payment_methods"]
    assert "certificate_3765853" in methods_before and "certificate_3765853" not in methods
    assert methods["gift_card_8020792"]["amount"] == pytest.approx(methods_before["gift_card_8020792"]["amount"] - 198)
    # The cancelled K1NW8N was paid with it: a cancellation's refund takes days and credits no gift card at once.
    assert methods["gift_card_6136092"]["amount"] == pytest.approx(methods_before["gift_card_6136092"]["amount"] - 129)
    assert results[1].money == -2613


def test_task_39s_insured_economy_cancel_needs_a_covered_reason(loaded, tmp_path):
    base, _ = loaded
    shutil.copy(base, tmp_path / "t39.db")
    engine = make_engine(f"sqlite:///{tmp_path / 't39.db'}")
    api = pack.api(engine)
    refused = api.call("cancel_reservation", "amelia_davis_8890", {"reservation_id": "MSJ4OA", "reason": "other"})
    assert refused.outcome == "refused_precondition" and "insurance covers only health or weather" in refused.message
    assert api.call("cancel_reservation", "amelia_davis_8890",
                    {"reservation_id": "MSJ4OA", "reason": "weather"}).committed
    engine.dispose()
