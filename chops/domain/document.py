"""What every pack's data kit shares: a business's whole state as one typed JSON document (tau2's ``db.json``), read
strictly, loaded into the pack's tables in one transaction, and read back row by row for ``export``.

A pack brings its document's models (built on ``Strict``, ``Amount``, ``Name``, ``Address``), the rows of its tables
for a document and the document of its rows; ``DocumentStore`` does the rest the same for every pack (where a data
folder keeps its ``db.json``, the bulk load in one transaction, the ordered row reads an export is assembled from),
and ``DocumentPack`` is the data side of a pack object (load, export, demo data, "any users yet?").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Annotated, Any

import sqlalchemy as sa
from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic_settings import BaseSettings, SettingsConfigDict

from chops.settings import REPO_ROOT

CENT = Decimal("0.01")
BATCH = 2000  # rows per executemany: a round trip per batch, not per row, and no statement too large for MySQL
Row = dict[str, Any]


def to_cents(value: Any) -> Decimal:
    """An amount as a ``Decimal`` to the cent. Floats go through their shortest repr (``536.65``, not the
    binary expansion); more decimals are rounded half up (tau2 writes float noise such as 30.709999999999994)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise ValueError(f"not an amount: {value!r}")
    return Decimal(repr(value) if isinstance(value, float) else str(value)).quantize(CENT, ROUND_HALF_UP)


Amount = Annotated[Decimal, BeforeValidator(to_cents)]


def money(value: Decimal | None) -> float | None:
    """An amount as a float (exact for every value to the cent): how documents and results write money."""
    return None if value is None else float(value)


class Strict(BaseModel):
    """Unknown keys are an error: a field the pack does not store would be lost on export."""

    model_config = ConfigDict(extra="forbid")


class Name(Strict):
    """A person's name as tau2's documents hold it."""

    first_name: str
    last_name: str


class Address(Strict):
    """A postal address as tau2's documents hold it, in their key order."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


def data_folder(env_prefix: str, folder: str) -> Path:
    """A pack's data folder, read at run time and never copied: ``<env_prefix>DIR`` from the environment (read afresh,
    so a changed environment is seen), else ``shared/<folder>`` beside the repository."""

    class Folder(BaseSettings):
        model_config = SettingsConfigDict(env_prefix=env_prefix, extra="ignore")
        dir: Path = REPO_ROOT.parent / "shared" / folder

    return Folder().dir


def check_ids(kind: str, records: Mapping[str, Any], id_field: str) -> None:
    """Each record of a document's mapping is under its own id (``ValueError`` naming the first that is not)."""
    for key, record in records.items():
        if getattr(record, id_field) != key:
            raise ValueError(f"{kind} {key!r} holds the record of {getattr(record, id_field)!r}")


def check_listed(users: Mapping[str, Any], field: str, records: Mapping[str, Any], kind: str) -> None:
    """Every record (an order, a reservation) is in its user's list ``field`` exactly once, and every listed one
    exists (``ValueError`` naming the first offender): the tables keep a record's owner and its place in their list."""
    listed: dict[str, str] = {}
    for user in users.values():
        for record_id in getattr(user, field):
            if record_id in listed:
                raise ValueError(f"{kind} {record_id} is listed twice (users {listed[record_id]}, {user.user_id})")
            listed[record_id] = user.user_id
    for record_id, record in records.items():
        if listed.get(record_id) != record.user_id:
            raise ValueError(f"{kind} {record_id} is not in the {field} list of its user {record.user_id!r}")
    missing = sorted(set(listed) - set(records))
    if missing:
        raise ValueError(f"users list {field} that do not exist: {', '.join(missing[:5])}")


def document_path(directory: Path, data_folder: str) -> Path:
    """``DIR/database/db.json`` or else ``DIR/db.json`` (``FileNotFoundError`` naming ``data_folder``, the folder DIR
    should be, when neither exists)."""
    directory = Path(directory)
    for path in (directory / "database" / "db.json", directory / "db.json"):
        if path.is_file():
            return path
    raise FileNotFoundError(f"no db.json in {directory} or {directory / 'database'}; DIR must be the {data_folder} "
                            "data folder or its database folder")


def name_key(first_name: str, last_name: str) -> str:
    """The indexed form of a person's full name: "first last", lower-cased, single spaces ("is this message about
    someone else?" is an indexed ``IN`` on it, never a scan)."""
    return " ".join(f"{first_name} {last_name}".split()).lower()


def replace_rows(engine: sa.Engine, tables: Sequence[sa.Table], rows: Mapping[sa.Table, list[Row]], *,
                 create_schema: Callable[[sa.Engine], Any], progress: bool = False) -> dict[str, int]:
    """Create the schema if needed (``create_schema``), then in ONE transaction delete every row of ``tables``
    (parents first in that sequence) and insert ``rows``, in batches. Loading twice gives the same rows; a failure
    leaves the old ones. Returns the row count per table."""
    from tqdm import tqdm

    create_schema(engine)
    with engine.begin() as conn, tqdm(total=sum(len(rows.get(t, ())) for t in tables), unit="row",
                                      disable=not progress, desc="loading") as bar:
        for table in reversed(tables):  # children first: the foreign keys hold throughout
            conn.execute(table.delete())
        for table in tables:
            for batch in _batches(rows.get(table, [])):
                conn.execute(table.insert(), batch)
                bar.update(len(batch))
    return {table.name: len(rows.get(table, ())) for table in tables}


def _batches(rows: list[Row]) -> Iterable[list[Row]]:
    for i in range(0, len(rows), BATCH):
        yield rows[i:i + BATCH]


def row_reader(conn: sa.Connection) -> Callable[..., list[Row]]:
    """``rows(table, *columns)``: every row of ``table`` as a dict, ordered by ``columns`` (the ``seq`` columns that
    keep a document's order), on ``conn``. One query a table: an export reads whole tables, never row by row."""
    def rows(table: sa.Table, *order: str) -> list[Row]:
        return [dict(r._mapping) for r in conn.execute(sa.select(table).order_by(*(table.c[c] for c in order)))]
    return rows


def grouped(items: Iterable[Row], *key: str) -> dict[Any, list[Row]]:
    """``items`` by the value of ``key`` (one column) or the tuple of its values (several), in their order: a
    parent's children, read in one query, handed to each parent."""
    out: dict[Any, list[Row]] = defaultdict(list)
    for r in items:
        out[r[key[0]] if len(key) == 1 else tuple(r[k] for k in key)].append(r)
    return out


@dataclass(frozen=True)
class DocumentStore:
    """One pack's document in its tables: ``model`` (a ``Strict`` document with a ``check()`` of its cross-record
    rules), ``tables`` (parents first), ``rows(doc)`` (each table's rows for a document), ``assemble(rows)`` (the
    document of the rows ``row_reader`` gives), ``create_schema(engine)``; ``folder`` names the data folder in
    errors."""

    folder: str
    model: Any
    tables: Sequence[sa.Table]
    rows: Callable[[Any], Mapping[sa.Table, list[Row]]]
    assemble: Callable[[Callable[..., list[Row]]], dict[str, Any]]
    create_schema: Callable[[sa.Engine], Any]

    def read(self, directory: Path) -> Any:
        """The checked document of ``directory`` (``ValueError``/``ValidationError`` when malformed)."""
        doc = self.model.model_validate_json(document_path(directory, self.folder).read_bytes())
        doc.check()
        return doc

    def replace(self, engine: sa.Engine, doc: Any, *, progress: bool = False) -> dict[str, int]:
        """Create the schema if needed, then in ONE transaction replace every row of the tables with ``doc``'s."""
        return replace_rows(engine, self.tables, self.rows(doc), create_schema=self.create_schema, progress=progress)

    def load(self, engine: sa.Engine, directory: Path, *, progress: bool = False) -> dict[str, int]:
        """Replace the rows with the ``db.json`` of ``directory`` (``document_path``)."""
        return self.replace(engine, self.read(directory), progress=progress)

    def export(self, engine: sa.Engine) -> dict[str, Any]:
        """The whole state as the document, lists and mappings in their loaded (or written) order."""
        with engine.connect() as conn:
            return self.assemble(row_reader(conn))


class DocumentPack:
    """The data side of a ``DomainPack`` whose state is one document: a subclass sets ``store`` (its
    ``DocumentStore``), ``users`` (the table of its users) and ``demo`` (its made-up data set, a document)."""

    store: DocumentStore
    users: sa.Table
    demo: Callable[[], Any]

    def has_users(self, engine: sa.Engine) -> bool:
        """True when the users' table holds a row (demo data is seeded only into an empty system)."""
        if not sa.inspect(engine).has_table(self.users.name):
            return False
        with engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(self.users)).scalar() > 0

    def seed_demo(self, engine: sa.Engine) -> dict[str, int]:
        """The pack's made-up data set in place of the rows; rows per table."""
        return self.store.replace(engine, type(self).demo())

    def load(self, engine: sa.Engine, directory: Path, *, progress: bool = False) -> dict[str, int]:
        """The ``db.json`` of ``directory`` (the data folder or its ``database`` folder) in place of the rows."""
        return self.store.load(engine, directory, progress=progress)

    def export(self, engine: sa.Engine) -> dict:
        """The whole state in db.json's shape."""
        return self.store.export(engine)

    def replay(self, api: Any, user: str, name: str, args: dict[str, Any]) -> Any:
        """A data set's reference call, run as it stands (``DomainPack.replay``)."""
        return api.call(name, user, args)
