"""A small made-up shop for the retail pack's tests (our own data, never the tau2 store's): two customers
with gift cards, cards and PayPal, three products, and orders in every state the operations care about."""

from __future__ import annotations

import copy
from typing import Any

import sqlalchemy as sa

from apis.retail import loader
from apis.retail.document import Document
from apis.retail.service import RetailApi
from chops.db import make_engine

MIA, LEO = "mia_test_1", "leo_test_2"


def _variants(*rows: tuple[str, dict[str, str], bool, float]) -> dict[str, Any]:
    return {i: {"item_id": i, "options": o, "available": a, "price": p} for i, o, a, p in rows}


PRODUCTS = {
    "p-kettle": {"name": "Kettle", "product_id": "p-kettle", "variants": _variants(
        ("k-steel-1l", {"material": "steel", "capacity": "1L"}, True, 40.00),
        ("k-glass-1l", {"material": "glass", "capacity": "1L"}, True, 45.50),
        ("k-steel-2l", {"material": "steel", "capacity": "2L"}, False, 60.00),
        ("k-red-1l", {"material": "enamel", "capacity": "1L"}, True, 38.99))},
    "p-scarf": {"name": "Scarf", "product_id": "p-scarf", "variants": _variants(
        ("s-wool-red", {"fabric": "wool", "color": "red"}, True, 25.10),
        ("s-wool-blue", {"fabric": "wool", "color": "blue"}, True, 27.35),
        ("s-silk-red", {"fabric": "silk", "color": "red"}, True, 80.00))},
    "p-chair": {"name": "Chair", "product_id": "p-chair", "variants": _variants(
        ("c-black", {"color": "black"}, True, 120.00),
        ("c-white", {"color": "white"}, True, 130.00))},
}


def _line(item_id: str) -> dict[str, Any]:
    product = next(p for p in PRODUCTS.values() if item_id in p["variants"])
    v = product["variants"][item_id]
    return {"name": product["name"], "product_id": product["product_id"], "item_id": item_id, "price": v["price"],
            "options": dict(v["options"])}


def _address(street: str, zip_code: str) -> dict[str, str]:
    return {"address1": street, "address2": "", "city": "Testville", "country": "USA", "state": "ZZ", "zip": zip_code}


def _pay(kind: str, amount: float, method: str) -> dict[str, Any]:
    return {"transaction_type": kind, "amount": amount, "payment_method_id": method}


def _order(order_id: str, user: str, items: list[str], status: str, history: list[dict[str, Any]],
           tracking: str | None = None) -> dict[str, Any]:
    return {"order_id": order_id, "user_id": user, "address": _address("1 Test Way", "11111"),
            "items": [_line(i) for i in items], "status": status,
            "fulfillments": [{"tracking_id": [tracking], "item_ids": items}] if tracking else [],
            "payment_history": history}


ORDERS = [
    _order("#T0000001", MIA, ["k-steel-1l", "s-wool-red", "s-wool-red"], "pending",
           [_pay("payment", 90.20, "credit_card_mia")]),
    _order("#T0000002", MIA, ["c-black"], "pending", [_pay("payment", 120.00, "gift_card_mia")]),
    _order("#T0000003", MIA, ["k-glass-1l", "s-silk-red"], "delivered", [_pay("payment", 125.50, "credit_card_mia")],
           tracking="TRACK-0003"),
    _order("#T0000004", MIA, ["s-wool-blue"], "processed", [_pay("payment", 27.35, "paypal_mia")], tracking="TRACK-0004"),
    _order("#T0000005", MIA, ["s-wool-red"], "cancelled",
           [_pay("payment", 25.10, "paypal_mia"), _pay("refund", 25.10, "paypal_mia")]),
    # Paid by PayPal first, then moved to the gift card: three history entries.
    _order("#T0000006", MIA, ["k-red-1l"], "pending",
           [_pay("payment", 38.99, "paypal_mia"), _pay("payment", 38.99, "gift_card_mia"),
            _pay("refund", 38.99, "paypal_mia")]),
    _order("#T0000007", MIA, ["s-wool-blue"], "pending (item modified)",
           [_pay("payment", 25.10, "credit_card_mia"), _pay("payment", 2.25, "credit_card_mia")]),
    _order("#T0000008", LEO, ["k-red-1l"], "pending", [_pay("payment", 38.99, "paypal_leo")]),
    _order("#T0000009", LEO, ["s-wool-red"], "delivered", [_pay("payment", 25.10, "gift_card_leo")],
           tracking="TRACK-0009"),
]

USERS = {
    MIA: {"user_id": MIA, "name": {"first_name": "Mia", "last_name": "Sandoval"},
          "address": {"address1": "7 Lark Street", "address2": "Unit 2", "city": "Testville", "country": "USA",
                      "state": "ZZ", "zip": "11111"},
          "email": "Mia.Sandoval@example.test", "payment_methods": {
              "gift_card_mia": {"source": "gift_card", "id": "gift_card_mia", "balance": 100.00},
              "credit_card_mia": {"source": "credit_card", "id": "credit_card_mia", "brand": "visa", "last_four": "1111"},
              "paypal_mia": {"source": "paypal", "id": "paypal_mia"},
              "gift_card_mia_small": {"source": "gift_card", "id": "gift_card_mia_small", "balance": 3.00}},
          "orders": [o["order_id"] for o in ORDERS if o["user_id"] == MIA]},
    LEO: {"user_id": LEO, "name": {"first_name": "Leo", "last_name": "Park"}, "address": _address("9 Pine Road", "22222"),
          "email": "leo.park@example.test", "payment_methods": {
              "paypal_leo": {"source": "paypal", "id": "paypal_leo"},
              "gift_card_leo": {"source": "gift_card", "id": "gift_card_leo", "balance": 10.00}},
          "orders": [o["order_id"] for o in ORDERS if o["user_id"] == LEO]},
}


def shop_document() -> dict[str, Any]:
    """The made-up shop in db.json's shape (a fresh copy every call)."""
    return copy.deepcopy({"products": PRODUCTS, "users": USERS, "orders": {o["order_id"]: o for o in ORDERS}})


def load_shop(url: str, document: dict[str, Any] | None = None) -> tuple[sa.Engine, RetailApi]:
    """An engine on ``url`` holding the made-up shop (or ``document``), and the API over it."""
    engine = make_engine(url)
    doc = Document.model_validate(document or shop_document())
    doc.check()
    loader.replace_rows(engine, doc)
    return engine, RetailApi(engine)


def order(engine: sa.Engine, order_id: str) -> dict[str, Any]:
    """The order as exported (db.json's shape)."""
    return loader.export(engine)["orders"][order_id]


def balance(engine: sa.Engine, user: str, method: str) -> float:
    """A gift card's balance as exported."""
    return loader.export(engine)["users"][user]["payment_methods"][method]["balance"]
