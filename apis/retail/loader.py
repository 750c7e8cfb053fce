"""Load and export the shop: tau2's ``db.json`` in, the same document out (``STORE``, a
``chops.domain.document.DocumentStore``: ``load`` replaces every ``retail_*`` row in ONE transaction with bulk
inserts, loading twice gives the same rows).

What is the shop's own: the rows of each table for a document (``document_rows``), and the document of the rows
(``_document``) in exactly db.json's shape, adding an order's optional fields (``cancel_reason``, ``exchange_*``,
``return_*``) only when they are set, as db.json leaves them out.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from apis.retail import tables as t
from apis.retail.db import init_schema
from apis.retail.document import Document
from apis.retail.views import money
from chops.domain import document as kit
from chops.domain.document import grouped, name_key


def create_schema(engine: sa.Engine) -> None:
    """The ``retail_*`` tables and the agent's own ``chops_*`` tables, created or brought up to date by their
    migrations (``apis.retail.db.init_schema``; idempotent)."""
    init_schema(engine)


def document_rows(doc: Document) -> dict[sa.Table, list[dict[str, Any]]]:
    """The rows of every ``retail_*`` table for ``doc``."""
    rows: dict[sa.Table, list[dict[str, Any]]] = {table: [] for table in t.TABLES}
    for seq, p in enumerate(doc.products.values()):
        rows[t.product].append({"product_id": p.product_id, "seq": seq, "name": p.name})
        rows[t.variant] += [{"item_id": v.item_id, "product_id": p.product_id, "seq": i, "options": v.options,
                             "available": v.available, "price": v.price} for i, v in enumerate(p.variants.values())]
    user_seq: dict[str, int] = {}
    for seq, u in enumerate(doc.users.values()):
        first, last = u.name.first_name, u.name.last_name
        rows[t.customer].append({"user_id": u.user_id, "seq": seq, "first_name": first, "last_name": last,
                                 "name_key": name_key(first, last), "email": u.email, **u.address.model_dump()})
        rows[t.payment_method] += [{"user_id": u.user_id, "payment_method_id": m.id, "seq": i, "source": m.source,
                                    "brand": m.brand, "last_four": m.last_four, "balance": m.balance}
                                   for i, m in enumerate(u.payment_methods.values())]
        user_seq.update((order_id, i) for i, order_id in enumerate(u.orders))
    for seq, o in enumerate(doc.orders.values()):
        rows[t.order].append({"order_id": o.order_id, "seq": seq, "user_id": o.user_id,
                              "user_seq": user_seq[o.order_id], "status": o.status, **o.address.model_dump(),
                              "cancel_reason": o.cancel_reason,
                              "exchange_payment_method_id": o.exchange_payment_method_id,
                              "exchange_price_difference": o.exchange_price_difference,
                              "return_payment_method_id": o.return_payment_method_id})
        key = {"order_id": o.order_id}
        rows[t.order_item] += [{**key, "seq": i, "item_id": it.item_id, "product_id": it.product_id,
                                "name": it.name, "price": it.price, "options": it.options}
                               for i, it in enumerate(o.items)]
        for f_seq, f in enumerate(o.fulfillments):
            rows[t.fulfilment].append({**key, "seq": f_seq})
            rows[t.fulfilment_tracking] += [{**key, "fulfilment_seq": f_seq, "seq": i, "tracking_id": x}
                                            for i, x in enumerate(f.tracking_id)]
            rows[t.fulfilment_item] += [{**key, "fulfilment_seq": f_seq, "seq": i, "item_id": x}
                                        for i, x in enumerate(f.item_ids)]
        rows[t.payment] += [{**key, "seq": i, "transaction_type": p.transaction_type, "amount": p.amount,
                             "payment_method_id": p.payment_method_id} for i, p in enumerate(o.payment_history)]
        for kind, field in t.REQUEST_KINDS.items():
            rows[t.request_item] += [{**key, "kind": kind, "seq": i, "item_id": x}
                                     for i, x in enumerate(getattr(o, field) or [])]
    return rows


def _document(rows: Any) -> dict[str, Any]:
    variants = grouped(rows(t.variant, "product_id", "seq"), "product_id")
    products = {p["product_id"]: {"name": p["name"], "product_id": p["product_id"], "variants": {
        v["item_id"]: {"item_id": v["item_id"], "options": v["options"], "available": bool(v["available"]),
                       "price": money(v["price"])} for v in variants[p["product_id"]]}}
        for p in rows(t.product, "seq")}
    methods = grouped(rows(t.payment_method, "user_id", "seq"), "user_id")
    user_orders = grouped(rows(t.order, "user_id", "user_seq"), "user_id")
    users = {u["user_id"]: {
        "user_id": u["user_id"], "name": {"first_name": u["first_name"], "last_name": u["last_name"]},
        "address": {k: u[k] for k in t.ADDRESS_KEYS}, "email": u["email"],
        "payment_methods": {m["payment_method_id"]: _method(m) for m in methods[u["user_id"]]},
        "orders": [o["order_id"] for o in user_orders[u["user_id"]]]} for u in rows(t.customer, "seq")}
    items = grouped(rows(t.order_item, "order_id", "seq"), "order_id")
    fulfilments = grouped(rows(t.fulfilment, "order_id", "seq"), "order_id")
    tracking = grouped(rows(t.fulfilment_tracking, "order_id", "fulfilment_seq", "seq"), "order_id", "fulfilment_seq")
    shipped = grouped(rows(t.fulfilment_item, "order_id", "fulfilment_seq", "seq"), "order_id", "fulfilment_seq")
    payments = grouped(rows(t.payment, "order_id", "seq"), "order_id")
    requested = grouped(rows(t.request_item, "order_id", "kind", "seq"), "order_id", "kind")
    orders = {}
    for o in rows(t.order, "seq"):
        oid = o["order_id"]
        orders[oid] = {
            "order_id": oid, "user_id": o["user_id"], "address": {k: o[k] for k in t.ADDRESS_KEYS},
            "items": [{"name": i["name"], "product_id": i["product_id"], "item_id": i["item_id"],
                       "price": money(i["price"]), "options": i["options"]} for i in items[oid]],
            "status": o["status"],
            "fulfillments": [{"tracking_id": [x["tracking_id"] for x in tracking[(oid, f["seq"])]],
                              "item_ids": [x["item_id"] for x in shipped[(oid, f["seq"])]]} for f in fulfilments[oid]],
            "payment_history": [{"transaction_type": p["transaction_type"], "amount": money(p["amount"]),
                                 "payment_method_id": p["payment_method_id"]} for p in payments[oid]]}
        orders[oid].update(_optional_fields(o, {kind: [x["item_id"] for x in requested[(oid, kind)]]
                                                for kind in t.REQUEST_KINDS}))
    return {"products": products, "users": users, "orders": orders}


def _method(m: dict[str, Any]) -> dict[str, Any]:
    out = {"source": m["source"], "id": m["payment_method_id"]}
    for key in ("brand", "last_four"):
        if m[key] is not None:
            out[key] = m[key]
    if m["balance"] is not None:
        out["balance"] = money(m["balance"])
    return out


def _optional_fields(o: dict[str, Any], lists: dict[str, list[str]]) -> dict[str, Any]:
    """The optional order fields that are set, in tau2's order; an item list goes with its payment method."""
    out: dict[str, Any] = {}
    if o["cancel_reason"] is not None:
        out["cancel_reason"] = o["cancel_reason"]
    if o["exchange_payment_method_id"] is not None:
        out.update(exchange_items=lists["exchange_old"], exchange_new_items=lists["exchange_new"],
                   exchange_payment_method_id=o["exchange_payment_method_id"],
                   exchange_price_difference=money(o["exchange_price_difference"]))
    if o["return_payment_method_id"] is not None:
        out.update(return_items=lists["return"], return_payment_method_id=o["return_payment_method_id"])
    return out


STORE = kit.DocumentStore("retail (tau2-retail)", Document, t.TABLES, document_rows, _document, create_schema)
read_document, replace_rows, load, export = STORE.read, STORE.replace, STORE.load, STORE.export
