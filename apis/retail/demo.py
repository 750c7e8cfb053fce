"""A small made-up demo shop (our own data, not the tau2 store's) for ``chops db seed-demo`` with
``CHOPS_DOMAIN=retail``: three customers, three products, five orders in every state the operations need."""

from __future__ import annotations

from typing import Any

from apis.retail.document import Document


def _address(street: str, city: str, state: str, zip_code: str, line2: str = "") -> dict[str, str]:
    return {"address1": street, "address2": line2, "city": city, "country": "USA", "state": state, "zip": zip_code}


def _product(product_id: str, name: str, variants: list[tuple[str, dict[str, str], bool, float]]) -> dict[str, Any]:
    return {"name": name, "product_id": product_id, "variants": {
        item_id: {"item_id": item_id, "options": options, "available": available, "price": price}
        for item_id, options, available, price in variants}}


PRODUCTS = [
    _product("demo-lamp", "Desk Lamp", [
        ("lamp-white-led", {"color": "white", "bulb": "LED"}, True, 34.50),
        ("lamp-black-led", {"color": "black", "bulb": "LED"}, True, 36.00),
        ("lamp-black-halogen", {"color": "black", "bulb": "halogen"}, False, 29.99)]),
    _product("demo-mug", "Travel Mug", [
        ("mug-350-steel", {"capacity": "350ml", "material": "steel"}, True, 18.25),
        ("mug-500-steel", {"capacity": "500ml", "material": "steel"}, True, 21.75),
        ("mug-500-glass", {"capacity": "500ml", "material": "glass"}, True, 24.00)]),
    _product("demo-pack", "Hiking Backpack", [
        ("pack-20l-green", {"size": "20L", "color": "green"}, True, 59.90),
        ("pack-30l-green", {"size": "30L", "color": "green"}, True, 74.90),
        ("pack-30l-grey", {"size": "30L", "color": "grey"}, True, 74.90)]),
]


def _line(product: dict[str, Any], item_id: str) -> dict[str, Any]:
    v = product["variants"][item_id]
    return {"name": product["name"], "product_id": product["product_id"], "item_id": item_id, "price": v["price"],
            "options": v["options"]}


def _order(order_id: str, user: str, address: dict[str, str], lines: list[dict[str, Any]], status: str,
           method: str, tracking: str | None = None) -> dict[str, Any]:
    total = round(sum(line["price"] for line in lines), 2)
    shipped = [{"tracking_id": [tracking], "item_ids": [line["item_id"] for line in lines]}] if tracking else []
    return {"order_id": order_id, "user_id": user, "address": address, "items": lines, "status": status,
            "fulfillments": shipped,
            "payment_history": [{"transaction_type": "payment", "amount": total, "payment_method_id": method}]}


def demo_document() -> Document:
    """The demo shop as a checked db.json document."""
    lamp, mug, pack = PRODUCTS
    ada_home = _address("12 Harbour Lane", "Portland", "ME", "04101", "Apt 3")
    ben_home = _address("800 Cedar Avenue", "Boulder", "CO", "80302")
    cai_home = _address("5 Orchard Road", "Madison", "WI", "53703")
    orders = [
        _order("#D0000001", "ada_demo", ada_home, [_line(lamp, "lamp-white-led"), _line(mug, "mug-350-steel")],
               "pending", "gift_card_ada"),
        _order("#D0000002", "ada_demo", ada_home, [_line(pack, "pack-20l-green")], "delivered", "credit_card_ada",
               "TRK-DEMO-0001"),
        _order("#D0000003", "ben_demo", ben_home, [_line(mug, "mug-500-steel"), _line(mug, "mug-500-steel")],
               "delivered", "paypal_ben", "TRK-DEMO-0002"),
        _order("#D0000004", "ben_demo", ben_home, [_line(lamp, "lamp-black-led")], "processed", "paypal_ben",
               "TRK-DEMO-0003"),
        _order("#D0000005", "cai_demo", cai_home, [_line(pack, "pack-30l-grey")], "pending", "credit_card_cai"),
    ]
    users = [
        {"user_id": "ada_demo", "name": {"first_name": "Ada", "last_name": "Lindqvist"}, "address": ada_home,
         "email": "ada.lindqvist@example.com", "payment_methods": {
             "gift_card_ada": {"source": "gift_card", "id": "gift_card_ada", "balance": 40.0},
             "credit_card_ada": {"source": "credit_card", "id": "credit_card_ada", "brand": "visa",
                                 "last_four": "4242"}},
         "orders": ["#D0000001", "#D0000002"]},
        {"user_id": "ben_demo", "name": {"first_name": "Ben", "last_name": "Okafor"}, "address": ben_home,
         "email": "ben.okafor@example.com", "payment_methods": {
             "paypal_ben": {"source": "paypal", "id": "paypal_ben"},
             "gift_card_ben": {"source": "gift_card", "id": "gift_card_ben", "balance": 5.0}},
         "orders": ["#D0000003", "#D0000004"]},
        {"user_id": "cai_demo", "name": {"first_name": "Cai", "last_name": "Moreno"}, "address": cai_home,
         "email": "cai.moreno@example.com", "payment_methods": {
             "credit_card_cai": {"source": "credit_card", "id": "credit_card_cai", "brand": "mastercard",
                                 "last_four": "0005"}},
         "orders": ["#D0000005"]},
    ]
    doc = Document.model_validate({"products": {p["product_id"]: p for p in PRODUCTS},
                                   "users": {u["user_id"]: u for u in users},
                                   "orders": {o["order_id"]: o for o in orders}})
    doc.check()
    return doc
