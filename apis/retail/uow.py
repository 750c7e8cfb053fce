"""The shop's unit of work (cosmicpython style): ``with uow:`` opens a transaction, ``uow.commit()`` commits,
and leaving the block without a commit rolls back, so a dry run is the same code without the commit.
"""

from __future__ import annotations

import sqlalchemy as sa

from apis.retail import repositories as r
from chops.db import is_mysql
from chops.domain.audit import SqlAuditLog
from chops.domain.outcomes import Change


class RetailUnitOfWork:
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

    def __init__(self, engine: sa.Engine, *, write: bool = False):
        self.engine, self.write = engine, write
        self.conn: sa.Connection | None = None
        self.tx: sa.RootTransaction | None = None
        self.changes = []

    def __enter__(self) -> "RetailUnitOfWork":
        conn = self.engine.connect()
        if self.write and not is_mysql(self.engine):
            conn = conn.execution_options(sqlite_begin="immediate")
        self.conn, self.tx, self.changes = conn, conn.begin(), []
        args = (conn, self.changes, self.write and is_mysql(self.engine))
        self.customers = r.CustomerRepository(*args)
        self.payment_methods = r.PaymentMethodRepository(*args)
        self.products = r.ProductRepository(*args)
        self.orders = r.OrderRepository(*args)
        self.audit = SqlAuditLog(conn)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.rollback()
        finally:
            if self.conn is not None:
                self.conn.close()
                self.conn = None

    def commit(self) -> None:
        """Commit the transaction."""
        assert self.tx is not None, "commit outside `with uow:`"
        self.tx.commit()

    def rollback(self) -> None:
        """Roll back unless already committed."""
        if self.tx is not None and self.tx.is_active:
            self.tx.rollback()
