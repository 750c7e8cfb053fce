"""Unit of work (cosmicpython style): ``with uow:`` opens a transaction, ``uow.commit()`` commits,
and leaving the block without a commit rolls back. A dry run is the same code without the commit.
"""

from __future__ import annotations

import sqlalchemy as sa

from apis.cphos import repositories as r
from chops.domain.audit import SqlAuditLog
from chops.domain.outcomes import Change
from chops.domain.uow import SqlUnitOfWork as SqlTransaction


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


class SqlUnitOfWork(SqlTransaction, AbstractUnitOfWork):
    """A unit of work on one connection and one transaction of ``engine`` (``chops.domain.uow``).

    ``write=True`` locks what it reads (MySQL ``SELECT ... FOR UPDATE`` on the acting member;
    SQLite ``BEGIN IMMEDIATE``) so preconditions checked inside stay true until the commit.
    """

    def open_repositories(self, conn: sa.Connection, changes: list[Change], lock: bool) -> None:
        """CPHOS's repositories on the transaction's connection."""
        args = (conn, changes, lock)
        self.members = r.SqlMemberRepository(*args)
        self.schools = r.SqlSchoolRepository(*args)
        self.areas = r.SqlAreaRepository(*args)
        self.admins = r.SqlAdminRepository(*args)
        self.marking = r.SqlMarkingRepository(*args)
