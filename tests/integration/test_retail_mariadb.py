"""The retail pack on the real tau2-retail data and on real MariaDB (each test also runs on SQLite): db.json
round-trips exactly, the train tasks' reference writes run as their customers with money conserved to the cent,
customers stay apart, and two concurrent payments from one gift card cannot both draw on it."""

from __future__ import annotations

import json
import threading
import time
from decimal import Decimal

import pytest

from apis.retail import loader
from apis.retail.pack import pack
from apis.retail.service import RetailApi, resolve_customer
from apis.retail.uow import RetailUnitOfWork
from chops.db import make_engine
from chops.domain.outcomes import DomainError
from chops.domain.runner import parse_args
from tests.unit.retail_support import MIA, load_shop, shop_document


@pytest.fixture
def store(db_url, retail_dir):
    engine = make_engine(db_url)
    counts = pack.load(engine, retail_dir)
    yield engine, counts
    engine.dispose()


def test_db_json_round_trips_exactly_and_loading_twice_changes_nothing(store, retail_dir):
    engine, counts = store
    original = json.loads((retail_dir / "database" / "db.json").read_text())
    assert counts["retail_order"] == len(original["orders"]) and counts["retail_customer"] == len(original["users"])
    assert pack.export(engine) == original
    assert pack.load(engine, retail_dir) == counts
    assert pack.export(engine) == original


def _money(uow: RetailUnitOfWork, user: str) -> dict[str, Decimal]:
    """What a customer's money looks like: each order's net payment, and gift card balances plus what the
    gift cards paid net (constant: a gift card only ever pays or is refunded through an order)."""
    out: dict[str, Decimal] = {}
    cards = {m["payment_method_id"]: m["balance"] for m in uow.payment_methods.of_customer(user)
             if m["source"] == "gift_card"}
    held = sum(cards.values(), Decimal(0))
    for order_id in uow.orders.ids_of(user):
        o = uow.orders.get(order_id, user)
        signed = [(p["payment_method_id"], p["amount"] if p["transaction_type"] == "payment" else -p["amount"])
                  for p in o["payments"]]
        out[order_id] = sum((a for _, a in signed), Decimal(0))
        out[f"{order_id} items"] = Decimal(0) if o["status"] == "cancelled" else sum(
            (i["price"] for i in o["items"]), Decimal(0))
        held += sum((a for m, a in signed if m in cards), Decimal(0))
    out["gift cards"] = held
    return out


def test_the_train_tasks_reference_writes_keep_the_money_straight(store, retail_dir):
    """Each task's reference writes run in order as its customer (one transaction, rolled back): the only
    refusal allowed is a gift card that cannot cover a difference (the README's note on one task); every
    order's net payment equals its items' total, and gift card money is conserved, to the cent."""
    engine, _ = store
    tasks = json.loads((retail_dir / "tasks" / "train.json").read_text())
    users = {s["task_id"]: s["user_id"] for s in json.loads((retail_dir / "users" / "train.json").read_text())["scripts"]}
    api = RetailApi(engine)
    done, refusals = 0, []
    for task in tasks:
        user = users[task["id"]]
        with RetailUnitOfWork(engine, write=True) as uow:
            before = _money(uow, user)
            for action in task["evaluation_criteria"]["actions"]:
                op = api.operations.get(action["name"])
                if op is None or not op.writes:
                    continue
                args = {k: v for k, v in action["arguments"].items() if k != "user_id"}
                try:
                    actor, _ = resolve_customer(uow, user, op)
                    op.run(uow, actor, parse_args(op, args))
                    done += 1
                except DomainError as exc:
                    refusals.append((exc.outcome, exc.message))
            after = _money(uow, user)
            assert after["gift cards"] == before["gift cards"], task["id"]
            for key in (k for k in after if k.endswith(" items")):
                assert after[key.removesuffix(" items")] == after[key], (task["id"], key)
            for o in (uow.orders.get(oid, user) for oid in uow.orders.ids_of(user)):
                for line in o["items"]:  # every line carries its own variant's price and options
                    v = uow.products.variant(line["item_id"])
                    assert (line["price"], line["options"]) == (v["price"], v["options"]), (task["id"], o["order_id"])
    assert done >= 100
    assert refusals and all(o == "refused_precondition" and m.startswith("Gift card") for o, m in refusals), refusals


def test_customers_of_the_real_store_stay_apart(store, retail_dir):
    engine, _ = store
    doc = json.loads((retail_dir / "database" / "db.json").read_text())
    owners = [u for u in doc["users"].values() if u["orders"]][:2]
    api = RetailApi(engine)
    mine, theirs = owners[0]["orders"][0], owners[1]["orders"][0]
    assert api.call("get_order_details", owners[0]["user_id"], {"order_id": mine}).outcome == "ok"
    other = api.call("get_order_details", owners[0]["user_id"], {"order_id": theirs})
    assert other.outcome == "not_in_system" and other.data is None
    email = api.call("find_user_id_by_email", owners[0]["user_id"], {"email": owners[1]["email"]})
    assert email.outcome == "not_in_system" and owners[1]["user_id"] not in email.message
    # Names shared by several customers: every one of them is found, by the full name only.
    names: dict[str, set[str]] = {}
    for u in doc["users"].values():
        names.setdefault(f"{u['name']['first_name']} {u['name']['last_name']}", set()).add(u["user_id"])
    shared = next(n for n, ids in names.items() if len(ids) > 1)
    assert {uid for uid, _ in api.people_named([shared.upper()])} == names[shared]
    assert api.people_named([shared.split()[0]]) == []


class SlowUnitOfWork(RetailUnitOfWork):
    """Pauses after reading a payment method, so two writes overlap unless the first one's locks hold the
    second back (without them both would read the same gift card balance)."""

    def __enter__(self) -> "SlowUnitOfWork":
        super().__enter__()
        read = self.payment_methods.get

        def slow(*args: str) -> dict | None:
            row = read(*args)
            time.sleep(0.3)
            return row

        self.payment_methods.get = slow
        return self


def test_two_concurrent_payments_cannot_both_spend_one_gift_card(db_url):
    doc = shop_document()
    doc["users"][MIA]["payment_methods"]["gift_card_mia"]["balance"] = 150.0  # pays 90.20 or 120.00, not both
    doc["orders"]["#T0000002"]["payment_history"][0]["payment_method_id"] = "paypal_mia"
    engine, _ = load_shop(db_url, doc)
    api = RetailApi(engine, uow_factory=lambda write: SlowUnitOfWork(engine, write=write))
    barrier, results = threading.Barrier(2), {}

    def pay(order_id: str) -> None:
        barrier.wait()
        results[order_id] = api.call("modify_pending_order_payment", MIA,
                                     {"order_id": order_id, "payment_method_id": "gift_card_mia"})

    threads = [threading.Thread(target=pay, args=(o,)) for o in ("#T0000001", "#T0000002")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    outcomes = sorted(r.outcome.value for r in results.values())
    assert outcomes == ["ok", "refused_precondition"], [r.message for r in results.values()]
    paid = next(o for o, r in results.items() if r.committed)
    left = loader.export(engine)["users"][MIA]["payment_methods"]["gift_card_mia"]["balance"]
    assert left == {"#T0000001": 59.8, "#T0000002": 30.0}[paid]
    engine.dispose()
