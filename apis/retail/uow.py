"""The shop's unit of work (cosmicpython style): ``with uow:`` opens a transaction, ``uow.commit()`` commits,
and leaving the block without a commit rolls back, so a dry run is the same code without the commit.
"""

from __future__ import annotations

import sqlalchemy as sa

from apis.retail import repositories as r
from chops.domain.audit import SqlAuditLog
from chops.domain.outcomes import Change
from chops.domain.uow import SqlUnitOfWork


class RetailUnitOfWork(SqlUnitOfWork):
    """One connection and one transaction of ``engine``, with the shop's repositories and the agent's audit
    log on it.

    ``write=True`` locks what it reads (MySQL ``SELECT ... FOR UPDATE`` on the customer, the order and the
    payment methods an operation checks; SQLite ``BEGIN IMMEDIATE``), so preconditions checked inside stay
    true until the commit.
    """

    customers: r.CustomerRepository
    payment_methods: r.PaymentMethodRepository
    products: r.ProductRepository
    orders: r.OrderRepository
    audit: SqlAuditLog
    changes: list[Change]

    def open_repositories(self, conn: sa.Connection, changes: list[Change], lock: bool) -> None:
        """The shop's repositories on the transaction's connection."""
        args = (conn, changes, lock)
        self.customers = r.CustomerRepository(*args)
        self.payment_methods = r.PaymentMethodRepository(*args)
        self.products = r.ProductRepository(*args)
        self.orders = r.OrderRepository(*args)
