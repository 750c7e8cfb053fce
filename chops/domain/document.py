"""What every pack's data kit shares: a business's whole state as one typed JSON document (tau2's ``db.json``), read
strictly, loaded into the pack's tables in one transaction, and read back row by row for ``export``.

A pack brings its document's models (built on ``Strict`` and ``Amount``), its rows and its tables; what is here is
the same for every pack: amounts to the cent, where a data folder keeps its ``db.json``, the bulk load, and the
ordered row reads an export is assembled from.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Annotated, Any

import sqlalchemy as sa
from pydantic import BaseModel, BeforeValidator, ConfigDict

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
