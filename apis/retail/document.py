"""The shop's whole state as one JSON document (tau2's ``db.json``): typed, so a malformed file fails
loudly on load instead of loading half. ``load`` reads this shape and ``export`` writes it back.

``{"products": {product_id: Product}, "users": {user_id: User}, "orders": {order_id: Order}}``; the optional
order fields the writes add are absent (or null) until set.
"""

from __future__ import annotations

from typing import Any

from chops.domain.document import Address, Amount, Name, Strict, check_ids, check_listed


class Variant(Strict):
    item_id: str
    options: dict[str, Any]
    available: bool
    price: Amount


class Product(Strict):
    name: str
    product_id: str
    variants: dict[str, Variant]


class PaymentMethod(Strict):
    source: str
    id: str
    brand: str | None = None
    last_four: str | None = None
    balance: Amount | None = None


class User(Strict):
    user_id: str
    name: Name
    address: Address
    email: str
    payment_methods: dict[str, PaymentMethod]
    orders: list[str]


class OrderItem(Strict):
    name: str
    product_id: str
    item_id: str
    price: Amount
    options: dict[str, Any]


class Fulfillment(Strict):
    tracking_id: list[str]
    item_ids: list[str]


class Payment(Strict):
    transaction_type: str
    amount: Amount
    payment_method_id: str


class Order(Strict):
    order_id: str
    user_id: str
    address: Address
    items: list[OrderItem]
    status: str
    fulfillments: list[Fulfillment]
    payment_history: list[Payment]
    cancel_reason: str | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: Amount | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None


class Document(Strict):
    products: dict[str, Product]
    users: dict[str, User]
    orders: dict[str, Order]

    def check(self) -> None:
        """Cross-record rules the tables rely on (``ValueError`` naming the first offender): mapping keys
        equal the records' ids, every order is in its owner's list exactly once and every listed order
        exists, an order's payments use its owner's methods, and requested exchanges or returns are whole."""
        check_ids("product", self.products, "product_id")
        check_ids("user", self.users, "user_id")
        check_ids("order", self.orders, "order_id")
        for product in self.products.values():
            for key, v in product.variants.items():
                if v.item_id != key:
                    raise ValueError(f"product {product.product_id}: variant {key!r} holds item {v.item_id!r}")
        check_listed(self.users, "orders", self.orders, "order")
        for order in self.orders.values():
            self._check_order(order)

    def _check_order(self, order: Order) -> None:
        methods = self.users[order.user_id].payment_methods
        for p in order.payment_history:
            if p.payment_method_id not in methods:
                raise ValueError(f"order {order.order_id} paid with {p.payment_method_id}, not a method of its user")
        # The tables keep a request's item lists with its payment method: the fields come and go together.
        groups = {"exchange": (order.exchange_items, order.exchange_new_items, order.exchange_payment_method_id,
                               order.exchange_price_difference),
                  "return": (order.return_items, order.return_payment_method_id)}
        for name, fields in groups.items():
            if len({f is None for f in fields}) > 1:
                raise ValueError(f"order {order.order_id}: the {name} fields are only partly set")
