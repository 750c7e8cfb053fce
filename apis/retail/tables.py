"""The online shop's tables (SQLAlchemy Core, their own ``MetaData``): customers and their payment methods,
products and their variants, orders with their items, fulfilments, payment history and requested returns or
exchanges.

Why the columns are what they are:

* Money is ``Numeric(12, 2)``: exact to the cent on MariaDB (DECIMAL) and read back as ``Decimal`` on
  SQLite. Every amount in the shop's data is to the cent.
* ``seq`` columns keep the order of the document's lists and mappings (a customer's orders, an order's
  items and payment history, a product's variants), so ``export`` writes back exactly what was loaded.
* Identifiers compare byte-exactly on MariaDB too (``chops.domain.columns.key``): ``#W0000001`` is not ``#w0000001``.
* JSON only where the shape is free: a variant's (and an ordered line's) options, e.g. ``{"color": "blue"}``.
* ``customer.name_key`` is the lower-cased "first last", indexed: "is this message about another customer?"
  is an indexed ``IN`` lookup, never a scan.
"""

from __future__ import annotations

import sqlalchemy as sa

from chops.domain.columns import ADDRESS, account, address, key

metadata = sa.MetaData()

Money = sa.Numeric(12, 2)
ADDRESS_KEYS = tuple(ADDRESS)

product = sa.Table(
    "retail_product", metadata,
    key("product_id", primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("name", sa.String(128), nullable=False),
)

variant = sa.Table(
    "retail_variant", metadata,
    key("item_id", primary_key=True),
    key("product_id", sa.ForeignKey("retail_product.product_id"), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("available", sa.Boolean, nullable=False),
    sa.Column("price", Money, nullable=False),
    sa.Index("ix_retail_variant_product", "product_id", "seq"),
)

customer = sa.Table(
    "retail_customer", metadata,
    *account("retail_customer"),
    *address(),
    sa.Index("ix_retail_customer_email", "email"),
)

payment_method = sa.Table(
    "retail_payment_method", metadata,
    key("user_id", sa.ForeignKey("retail_customer.user_id"), primary_key=True),
    key("payment_method_id", primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("source", sa.String(32), nullable=False),
    sa.Column("brand", sa.String(32), nullable=True),
    sa.Column("last_four", sa.String(4), nullable=True),
    sa.Column("balance", Money, nullable=True),
)

order = sa.Table(
    "retail_order", metadata,
    key("order_id", primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    key("user_id", sa.ForeignKey("retail_customer.user_id"), nullable=False),
    sa.Column("user_seq", sa.Integer, nullable=False),  # position in the customer's list of orders
    sa.Column("status", sa.String(32), nullable=False),
    *address(),
    # The optional fields the writes add (absent from db.json until then).
    sa.Column("cancel_reason", sa.String(64), nullable=True),
    key("exchange_payment_method_id", nullable=True),
    sa.Column("exchange_price_difference", Money, nullable=True),
    key("return_payment_method_id", nullable=True),
    sa.Index("ix_retail_order_user", "user_id", "user_seq"),
)

order_item = sa.Table(
    "retail_order_item", metadata,
    key("order_id", sa.ForeignKey("retail_order.order_id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    key("item_id", nullable=False),
    key("product_id", nullable=False),
    sa.Column("name", sa.String(128), nullable=False),
    sa.Column("price", Money, nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
)

fulfilment = sa.Table(
    "retail_fulfilment", metadata,
    key("order_id", sa.ForeignKey("retail_order.order_id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
)

fulfilment_tracking = sa.Table(
    "retail_fulfilment_tracking", metadata,
    key("order_id", primary_key=True),
    sa.Column("fulfilment_seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    key("tracking_id", nullable=False),
    sa.ForeignKeyConstraint(["order_id", "fulfilment_seq"], ["retail_fulfilment.order_id", "retail_fulfilment.seq"]),
    sa.Index("ix_retail_fulfilment_tracking_id", "tracking_id"),
)

fulfilment_item = sa.Table(
    "retail_fulfilment_item", metadata,
    key("order_id", primary_key=True),
    sa.Column("fulfilment_seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    key("item_id", nullable=False),
    sa.ForeignKeyConstraint(["order_id", "fulfilment_seq"], ["retail_fulfilment.order_id", "retail_fulfilment.seq"]),
)

payment = sa.Table(
    "retail_payment", metadata,
    key("order_id", sa.ForeignKey("retail_order.order_id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("transaction_type", sa.String(16), nullable=False),
    sa.Column("amount", Money, nullable=False),
    key("payment_method_id", nullable=False),
)

# The item lists of a requested exchange or return: ``kind`` is one of REQUEST_KINDS.
request_item = sa.Table(
    "retail_request_item", metadata,
    key("order_id", sa.ForeignKey("retail_order.order_id"), primary_key=True),
    sa.Column("kind", sa.String(24), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    key("item_id", nullable=False),
)

# request_item.kind -> the order field of db.json it holds
REQUEST_KINDS = {"exchange_old": "exchange_items", "exchange_new": "exchange_new_items", "return": "return_items"}

# Parents first: inserts go in this order, deletes in reverse.
TABLES = (product, variant, customer, payment_method, order, order_item, fulfilment, fulfilment_tracking,
          fulfilment_item, payment, request_item)
