"""Columns every pack's tables declare alike (SQLAlchemy Core): identifiers compared byte-exactly, a person's account
(name, the indexed lower-cased full name, email), a postal address in tau2's key order, and the key of a list's rows
under their parent (the parent's id and the row's place in the list)."""

from __future__ import annotations

import sqlalchemy as sa

from chops.tables import exact_string

ID_LENGTH = 64  # width of an identifier column (tau2's ids are at most 23 characters)
# A postal address's columns and widths, in db.json's key order.
ADDRESS = {"address1": 255, "address2": 255, "city": 128, "country": 64, "state": 64, "zip": 32}


def key(name: str, *args, **kwargs) -> sa.Column:
    """An identifier column: compared byte-exactly on MySQL too (``#W0000001`` is not ``#w0000001``)."""
    return sa.Column(name, exact_string(ID_LENGTH), *args, **kwargs)


def account(table: str) -> list[sa.schema.SchemaItem]:
    """A person's account: ``user_id`` (the primary key), ``seq`` (their place in the document), first and last name,
    ``name_key`` (lower-cased "first last", indexed: "is this message about someone else?" is an indexed ``IN``
    look-up, never a scan) and email."""
    return [key("user_id", primary_key=True),
            sa.Column("seq", sa.Integer, nullable=False),
            sa.Column("first_name", sa.String(64), nullable=False),
            sa.Column("last_name", sa.String(64), nullable=False),
            sa.Column("name_key", sa.String(130), nullable=False),
            sa.Column("email", sa.String(255), nullable=False),
            sa.Index(f"ix_{table}_name_key", "name_key")]


def address(prefix: str = "") -> list[sa.Column]:
    """The six address columns, in db.json's key order."""
    return [sa.Column(f"{prefix}{k}", sa.String(n), nullable=False) for k, n in ADDRESS.items()]


def listed_under(parent: str) -> list[sa.Column]:
    """The key of a list's rows under their parent (``"table.column"``): the parent's id and ``seq``, the row's place
    in the parent's list (the document's order, kept by ``export``)."""
    return [key(parent.split(".")[1], sa.ForeignKey(parent), primary_key=True),
            sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False)]
