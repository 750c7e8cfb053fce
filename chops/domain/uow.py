"""The SQL unit of work every pack's own builds on (cosmicpython style): ``with uow:`` opens one connection and
one transaction, ``uow.commit()`` commits, and leaving the block without a commit rolls back, so a dry run is
the same code without the commit. The shared audit log (``chops.domain.audit``) rides on the same
transaction; a pack attaches its repositories in ``open_repositories``.
"""

from __future__ import annotations

import sqlalchemy as sa

from chops.db import is_mysql
from chops.domain.audit import SqlAuditLog
from chops.domain.outcomes import Change


class SqlUnitOfWork:
    """One connection and one transaction of ``engine``.

    ``write=True`` makes reads lock what they read (repositories get ``lock=True``: MySQL ``SELECT ... FOR
    UPDATE``; SQLite starts with ``BEGIN IMMEDIATE``), so preconditions checked inside stay true until the commit.
    """

    audit: SqlAuditLog
    changes: list[Change]

    def __init__(self, engine: sa.Engine, *, write: bool = False):
        self.engine, self.write = engine, write
        self.conn: sa.Connection | None = None
        self.tx: sa.RootTransaction | None = None
        self.changes = []

    def open_repositories(self, conn: sa.Connection, changes: list[Change], lock: bool) -> None:
        """Attach the pack's repositories to ``conn`` (writes record into ``changes``; ``lock``: read for update)."""
        raise NotImplementedError

    def __enter__(self):
        conn = self.engine.connect()
        if self.write and not is_mysql(self.engine):
            conn = conn.execution_options(sqlite_begin="immediate")
        self.conn, self.tx, self.changes = conn, conn.begin(), []
        self.open_repositories(conn, self.changes, self.write and is_mysql(self.engine))
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
