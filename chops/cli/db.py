"""``chops db``: create, load, export and seed the database (SQLite or MySQL/MariaDB)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

database_url_option = click.option(
    "--database-url", default=None, metavar="URL",
    help="SQLAlchemy URL (overrides CHOPS_DATABASE_URL), e.g. mysql+pymysql://root@127.0.0.1/chops")


def engine_for(database_url: str | None):
    """An engine for the URL given on the command line, else the configured one."""
    from chops.db import make_engine
    from chops.settings import get_settings

    return make_engine(database_url or get_settings().resolved_database_url)


def _report(counts: dict[str, int], seconds: float) -> None:
    for table, n in counts.items():
        click.echo(f"  {table:<20} {n:>6} rows")
    click.echo(f"{sum(counts.values())} rows in {seconds:.2f} s")


@click.group()
def db() -> None:
    """Create, load and seed the database."""


def pack_for(domain: str | None):
    """The domain pack named on the command line, else the configured one (``CHOPS_DOMAIN``)."""
    from chops.domain.pack import UnknownDomain, load_pack
    from chops.settings import get_settings

    try:
        return load_pack(domain or get_settings().domain)
    except UnknownDomain as exc:
        raise click.ClickException(str(exc)) from None


domain_option = click.option("--domain", default=None, metavar="PACK",
                             help="the domain pack (overrides CHOPS_DOMAIN; default cphos)")


@db.command("init")
@database_url_option
@domain_option
def init(database_url: str | None, domain: str | None) -> None:
    """Create every table that does not exist yet (idempotent): the agent's and the domain pack's."""
    engine = engine_for(database_url)
    pack_for(domain).create_schema(engine)
    click.echo(f"schema ready in {engine.url.render_as_string(hide_password=True)}")


progress_option = click.option("--progress/--no-progress", default=True, help="show a progress bar")


@db.command("load")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@database_url_option
@domain_option
@progress_option
def load_cmd(directory: Path, database_url: str | None, domain: str | None, progress: bool) -> None:
    """Replace the domain pack's rows with the dump in DIRECTORY (one transaction; running it twice is
    harmless). CPHOS: the dataset's `database` folder; retail: the tau2-retail folder (or its `database`)."""
    _load(pack_for(domain), directory, database_url, progress)


@db.command("load-cphos")
@click.argument("directory", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@database_url_option
@progress_option
def load_cphos_cmd(directory: Path | None, database_url: str | None, progress: bool) -> None:
    """`chops db load --domain cphos DIRECTORY`, DIRECTORY defaulting to $CHOPS_CPHOS_DIR/database."""
    from chops.settings import get_settings

    _load(pack_for("cphos"), directory or get_settings().cphos_dir / "database", database_url, progress)


def _load(pack, directory: Path, database_url: str | None, progress: bool) -> None:
    engine = engine_for(database_url)
    start = time.perf_counter()
    try:
        counts = pack.load(engine, directory, progress=progress)
    except (FileNotFoundError, ValueError) as exc:  # ValueError: a malformed dump (nothing was loaded)
        raise click.ClickException(str(exc)) from None
    _report(counts, time.perf_counter() - start)


@db.command("export")
@click.option("--out", "out", default=None, type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="write the JSON document to FILE instead of standard output")
@database_url_option
@domain_option
def export_cmd(out: Path | None, database_url: str | None, domain: str | None) -> None:
    """Write the domain pack's whole state as the JSON document `db load` reads (retail: db.json's shape)."""
    pack = pack_for(domain)
    try:
        document = pack.export(engine_for(database_url))
    except NotImplementedError as exc:
        click.echo(f"Error: the {pack.name} pack cannot export its state ({exc}).", err=True)
        sys.exit(2)
    text = json.dumps(document, indent=4, ensure_ascii=False)  # db.json's layout (retail: byte for byte)
    if out is None:
        click.echo(text)
    else:
        out.write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


@db.command("seed-demo")
@database_url_option
@domain_option
def seed_demo_cmd(database_url: str | None, domain: str | None) -> None:
    """Replace the domain pack's rows with its small demo data set (CPHOS: demo_leader, demo_admin, ...)."""
    engine = engine_for(database_url)
    start = time.perf_counter()
    counts = pack_for(domain).seed_demo(engine)
    _report(counts, time.perf_counter() - start)
