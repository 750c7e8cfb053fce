"""SQL repositories of the shop over one Core connection (``chops.domain.repository.SqlRepository``: bound
parameters only, reads that lock in a write unit of work, every write recorded as row-level ``Change``s).
"""

from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal

import sqlalchemy as sa

from apis.retail import tables as t
from apis.retail.views import address_view
from chops.domain import repository as kit
from chops.domain.outcomes import Change
from chops.domain.repository import Row, SqlRepository


def named_query(keys: Collection[str]) -> sa.Select:
    """The customers whose ``name_key`` is one of ``keys``: an ``IN`` on the indexed column."""
    return kit.named_query(t.customer, keys)


class CustomerRepository(kit.AccountRepository):
    """Customers (``retail_customer``): ``get`` one, the ones ``named``."""

    table = t.customer

    def set_address(self, customer: Row, address: Row) -> None:
        """Replace the customer's default address."""
        self._update(t.customer, {"user_id": customer["user_id"]}, customer, address)


class PaymentMethodRepository(SqlRepository):
    """Customers' payment methods (``retail_payment_method``)."""

    def of_customer(self, user_id: str) -> list[Row]:
        """The customer's payment methods in their order."""
        pm = t.payment_method
        return self._rows(sa.select(pm).where(pm.c.user_id == user_id).order_by(pm.c.seq), lock=True)

    def get(self, user_id: str, payment_method_id: str) -> Row | None:
        """The customer's payment method ``payment_method_id`` (locked in a write unit of work)."""
        pm = t.payment_method
        return self._one(sa.select(pm).where(pm.c.user_id == user_id, pm.c.payment_method_id == payment_method_id),
                         lock=True)

    def set_balance(self, method: Row, balance: Decimal) -> None:
        """Set a gift card's balance."""
        key = {"user_id": method["user_id"], "payment_method_id": method["payment_method_id"]}
        self._update(t.payment_method, key, method, {"balance": balance})


class ProductRepository(SqlRepository):
    """Products and their variants (public: no customer owns them)."""

    def types(self) -> list[Row]:
        """``product_id`` and ``name`` of every product, by name."""
        return self._rows(sa.select(t.product.c.product_id, t.product.c.name).order_by(t.product.c.name))

    def get(self, product_id: str) -> Row | None:
        """The product ``product_id`` with its ``variants`` (in their order)."""
        product = self._one(sa.select(t.product).where(t.product.c.product_id == product_id))
        if product is not None:
            v = t.variant
            product["variants"] = self._rows(sa.select(v).where(v.c.product_id == product_id).order_by(v.c.seq))
        return product

    def variant(self, item_id: str) -> Row | None:
        """The variant ``item_id`` with its product's ``name`` (locked in a write unit of work)."""
        v = t.variant
        stmt = (sa.select(v, t.product.c.name).join(t.product, t.product.c.product_id == v.c.product_id)
                .where(v.c.item_id == item_id))
        return self._one(stmt, lock=True)


class OrderRepository(SqlRepository):
    """Orders with their items, payment history, fulfilments and requested item lists."""

    def ids_of(self, user_id: str) -> list[str]:
        """The customer's order ids in their list's order (newest last)."""
        o = t.order
        return [r["order_id"] for r in self._rows(sa.select(o.c.order_id).where(o.c.user_id == user_id)
                                                  .order_by(o.c.user_seq))]

    def summaries_of(self, user_id: str) -> list[Row]:
        """The customer's orders in their list's order (newest last), each ``order_id``, ``status``, shipping
        ``address`` and the ``names`` of its items in line order: one indexed join, for the profile's overview."""
        o, i = t.order, t.order_item
        rows = self._rows(sa.select(o.c.order_id, o.c.status, *(o.c[k] for k in t.ADDRESS_KEYS), i.c.name)
                          .select_from(o.outerjoin(i, i.c.order_id == o.c.order_id))
                          .where(o.c.user_id == user_id).order_by(o.c.user_seq, i.c.seq))
        out: dict[str, Row] = {}
        for r in rows:
            summary = out.setdefault(r["order_id"], {"order_id": r["order_id"], "status": r["status"],
                                                     "address": address_view(r), "names": []})
            if r["name"] is not None:
                summary["names"].append(r["name"])
        return list(out.values())

    def get(self, order_id: str, user_id: str) -> Row | None:
        """Customer ``user_id``'s order ``order_id`` (locked in a write unit of work) with ``items``,
        ``payments``, ``fulfilments`` (``tracking_ids``, ``item_ids``) and ``requested`` (kind -> item ids).
        ``None`` when the customer has no such order: another customer's order is never even read."""
        order = self._one(sa.select(t.order).where(t.order.c.order_id == order_id, t.order.c.user_id == user_id),
                          lock=True)
        if order is None:
            return None

        def children(table: sa.Table, *order_by: str) -> list[Row]:
            return self._rows(sa.select(table).where(table.c.order_id == order_id)
                              .order_by(*(table.c[c] for c in order_by)))

        order["items"] = children(t.order_item, "seq")
        order["payments"] = children(t.payment, "seq")
        tracking = children(t.fulfilment_tracking, "fulfilment_seq", "seq")
        shipped = children(t.fulfilment_item, "fulfilment_seq", "seq")
        order["fulfilments"] = [
            {"tracking_ids": [x["tracking_id"] for x in tracking if x["fulfilment_seq"] == f["seq"]],
             "item_ids": [x["item_id"] for x in shipped if x["fulfilment_seq"] == f["seq"]]}
            for f in children(t.fulfilment, "seq")]
        requested = children(t.request_item, "kind", "seq")
        order["requested"] = {kind: [r["item_id"] for r in requested if r["kind"] == kind] for kind in t.REQUEST_KINDS}
        return order

    def update(self, order: Row, values: Row) -> None:
        """Set fields of the order row (status, address, the optional fields)."""
        self._update(t.order, {"order_id": order["order_id"]}, order, values)

    def add_payment(self, order: Row, transaction_type: str, amount: Decimal, payment_method_id: str) -> None:
        """Append a payment or refund to the order's payment history."""
        row = {"order_id": order["order_id"], "seq": len(order["payments"]), "transaction_type": transaction_type,
               "amount": amount, "payment_method_id": payment_method_id}
        self._insert(t.payment, ("order_id", "seq"), row)
        order["payments"].append(row)

    def update_item(self, order: Row, line: Row, values: Row) -> None:
        """Rewrite fields of one ordered line (``line``: one of ``order["items"]``)."""
        self._update(t.order_item, {"order_id": order["order_id"], "seq": line["seq"]}, line, values)

    def request_items(self, order: Row, kind: str, item_ids: list[str]) -> None:
        """Store the item list of a requested exchange or return. Recorded as ONE change of the order's
        field as db.json names it (``exchange_items``…): the diff speaks of the order, not of list rows."""
        r = t.request_item
        self.conn.execute(r.delete().where(r.c.order_id == order["order_id"], r.c.kind == kind))
        self.conn.execute(r.insert(), [{"order_id": order["order_id"], "kind": kind, "seq": i,
                                                     "item_id": x} for i, x in enumerate(item_ids)])
        self.changes.append(Change(table=t.order.name, key={"order_id": order["order_id"]},
                                   field=t.REQUEST_KINDS[kind], before=order["requested"][kind] or None,
                                   after=list(item_ids)))
        order["requested"][kind] = list(item_ids)
