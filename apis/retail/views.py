"""Compact renderings of the shop's records for operation results: only the fields that matter, options and
addresses as one line, money as floats to the cent. The executor reads them in its next prompt, which clips
each result (``chops.pipeline.lookups.RESULT_CLIP``): every character counts."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

Row = dict[str, Any]


UNAVAILABLE = "NOT available"  # a variant line's mark (the executor's grammar never offers such a variant)


def money(value: Decimal | None) -> float | None:
    """An amount as a float (exact for every value to the cent)."""
    return None if value is None else float(value)


def options_text(options: dict[str, Any]) -> str:
    """``{"color": "blue", "size": "M"}`` as ``color: blue, size: M``."""
    return ", ".join(f"{k}: {v}" for k, v in options.items())


def address_text(row: Row) -> str:
    """An address on one line: ``address1, address2, city, state zip, country`` (no empty parts)."""
    parts = [row["address1"], row["address2"], row["city"], f"{row['state']} {row['zip']}".strip(), row["country"]]
    return ", ".join(p for p in parts if p)


def address_view(row: Row) -> Row:
    """An address part by part, as the address operations take it: the profile's data holds each order's so (not
    shown to the model, whose look-ups show one line: shown part by part in an order's look-up, the 1.5B proposed a
    change of that order's address for "cancel my order"), and an address the customer names from their data ("my
    Chicago address", on an order) is completed from it (``chops.pipeline.completion``)."""
    return {k: row[k] for k in ("address1", "address2", "city", "state", "zip", "country")}


def method_view(m: Row) -> Row:
    """A payment method: its id and source, a gift card's balance, a card's brand and last four digits."""
    out: Row = {"id": m["payment_method_id"], "source": m["source"]}
    if m["balance"] is not None:
        out["balance"] = money(m["balance"])
    if m["brand"] is not None or m["last_four"] is not None:
        out["card"] = f"{m['brand'] or 'card'} ending {m['last_four'] or '?'}"
    return out


def customer_view(c: Row, methods: list[Row], order_ids: list[str]) -> Row:
    """A customer's details: name, email, default address, payment methods, order ids (newest last)."""
    return {"user_id": c["user_id"], "name": f"{c['first_name']} {c['last_name']}", "email": c["email"],
            "address": address_text(c), "payment_methods": [method_view(m) for m in methods], "orders": order_ids}


def order_view(o: Row) -> Row:
    """An order: id, status, shipping address, items, their total, payments, tracking ids, and any request or cancel
    reason. The total is the items' prices as they are now: asked "what's my order's total now?" after an item change,
    the 1.5B has to add five prices, and a sum no look-up holds is taken for an invented number (``verifier``)."""
    total = sum((i["price"] for i in o["items"]), Decimal(0))
    # What the lines not returned cost, beside the total: asked "what did I pay for the remaining items?" after a
    # return, the 1.5B gave the whole total, or the refund where the view showed it too (train tasks 46, 47).
    prices = {i["item_id"]: i["price"] for i in o["items"]}
    returned = sum((prices[x] for x in o["requested"].get("return") or () if x in prices), Decimal(0)) \
        if o["return_payment_method_id"] is not None else None
    out: Row = {
        "order_id": o["order_id"], "status": o["status"], "address": address_text(o),
        "items": [{"item_id": i["item_id"], "product_id": i["product_id"], "name": i["name"],
                   "options": options_text(i["options"]), "price": money(i["price"])} for i in o["items"]],
        "total": money(total),
        **({"remaining_items_total": money(total - returned)} if returned is not None else {}),
        "payments": [{"type": p["transaction_type"], "amount": money(p["amount"]), "method": p["payment_method_id"]}
                     for p in o["payments"]],
        "tracking_ids": [x for f in o["fulfilments"] for x in f["tracking_ids"]],
    }
    if o["cancel_reason"] is not None:
        out["cancel_reason"] = o["cancel_reason"]
    if o["exchange_payment_method_id"] is not None:
        out["exchange"] = {"items": o["requested"]["exchange_old"], "new_items": o["requested"]["exchange_new"],
                           "method": o["exchange_payment_method_id"],
                           "price_difference": money(o["exchange_price_difference"])}
    if o["return_payment_method_id"] is not None:
        out["return"] = {"items": o["requested"]["return"], "method": o["return_payment_method_id"]}
    return out


def variant_line(v: Row, *, keys: bool = True) -> str:
    """One variant as a short line: ``color: blue, size: M; $50.88; available`` (``keys=False``: ``blue, M; ...``)."""
    state = "available" if v["available"] else UNAVAILABLE
    options = options_text(v["options"]) if keys else ", ".join(str(x) for x in v["options"].values())
    return f"{options}; ${money(v['price']):.2f}; {state}"


def product_view(p: Row) -> Row:
    """A product and its variants keyed by item id, one short line each. When every variant has the same
    option names they are listed once (``options``) and the lines hold only the values: a product has up to
    a few dozen variants, and the executor's prompt clips a long result."""
    names = {tuple(v["options"]) for v in p["variants"]}
    shared = len(names) == 1
    out: Row = {"product_id": p["product_id"], "name": p["name"],
                # Counted here: asked "how many options are available?", the 1.5B got a dozen lines' count wrong.
                "available_variants": sum(1 for v in p["variants"] if v["available"]),
                "variants_in_all": len(p["variants"])}
    if shared:
        out["options"] = ", ".join(next(iter(names)))
    # Available variants first: if the prompt clips the result, what is lost is what cannot be ordered anyway.
    ordered = sorted(p["variants"], key=lambda v: not v["available"])
    out["variants"] = {v["item_id"]: variant_line(v, keys=not shared) for v in ordered}
    return out


def item_view(v: Row) -> Row:
    """One variant with its product's id and name (``get_item_details``)."""
    return {"item_id": v["item_id"], "product_id": v["product_id"], "name": v["name"],
            "options": options_text(v["options"]), "available": bool(v["available"]), "price": money(v["price"])}

