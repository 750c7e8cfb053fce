"""Unit of work (cosmicpython style): ``with uow:`` opens a transaction, ``uow.commit()`` commits,
and leaving the block without a commit rolls back. A dry run is the same code without the commit.
"""

from __future__ import annotations

import sqlalchemy as sa

from apis.cphos import repositories as r
from chops.db import is_mysql
from chops.domain.audit import SqlAuditLog
from chops.domain.outcomes import Change


class AbstractUnitOfWork:
    """What operations see: repositories plus the row-level changes made so far."""

    members: r.SqlMemberRepository
    schools: r.SqlSchoolRepository
    areas: r.SqlAreaRepository
    admins: r.SqlAdminRepository
    marking: r.SqlMarkingRepository
    audit: SqlAuditLog
    changes: list[Change]

    def __enter__(self) -> "AbstractUnitOfWork":
        return self

    def __exit__(self, *exc) -> None:
        self.rollback()

    def commit(self) -> None:
        """Make the changes permanent."""
        raise NotImplementedError

    def rollback(self) -> None:
        """Discard uncommitted changes (a no-op after a commit)."""
        raise NotImplementedError


class SqlUnitOfWork(AbstractUnitOfWork):
    """A unit of work on one connection and one transaction of ``engine``.

    ``write=True`` locks what it reads (MySQL ``SELECT ... FOR UPDATE`` on the acting member;
    SQLite ``BEGIN IMMEDIATE``) so preconditions checked inside stay true until the commit.
    """

    def __init__(self, engine: sa.Engine, *, write: bool = False):
        self.engine, self.write = engine, write
        self.conn: sa.Connection | None = None
        self.tx: sa.RootTransaction | None = None

    def __enter__(self) -> "SqlUnitOfWork":
        conn = self.engine.connect()
        if self.write and not is_mysql(self.engine):
            conn = conn.execution_options(sqlite_begin="immediate")
        self.conn, self.tx, self.changes = conn, conn.begin(), []
        lock = self.write and is_mysql(self.engine)
        args = (conn, self.changes, lock)
        self.members = r.SqlMemberRepository(*args)
        self.schools = r.SqlSchoolRepository(*args)
        self.areas = r.SqlAreaRepository(*args)
        self.admins = r.SqlAdminRepository(*args)
        self.marking = r.SqlMarkingRepository(*args)
        self.audit = SqlAuditLog(conn)
        return self

    def __exit__(self, *exc) -> None:
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
