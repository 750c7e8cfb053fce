"""``chops db``: create, load and seed the database (SQLite or MySQL/MariaDB)."""

from __future__ import annotations

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


@db.command("init")
@database_url_option
def init(database_url: str | None) -> None:
    """Create every table that does not exist yet (idempotent)."""
    from apis.db import init_schema

    engine = engine_for(database_url)
    init_schema(engine)
    click.echo(f"schema ready in {engine.url.render_as_string(hide_password=True)}")


@db.command("load-cphos")
@click.argument("directory", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@database_url_option
@click.option("--progress/--no-progress", default=True, help="show a progress bar")
def load_cphos_cmd(directory: Path | None, database_url: str | None, progress: bool) -> None:
    """Replace the cmf_tp_* tables with the CPHOS dump in DIRECTORY (its `database` folder;
    default: $CHOPS_CPHOS_DIR/database). One transaction; running it twice is harmless."""
    from apis.loaders import load_cphos
    from chops.settings import get_settings

    directory = directory or get_settings().cphos_dir / "database"
    engine = engine_for(database_url)
    start = time.perf_counter()
    try:
        counts = load_cphos(engine, directory, progress=progress)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    _report(counts, time.perf_counter() - start)


@db.command("seed-demo")
@database_url_option
def seed_demo_cmd(database_url: str | None) -> None:
    """Replace the cmf_tp_* tables with the small demo data set (demo_leader, demo_admin, ...)."""
    from apis.loaders import seed_demo

    engine = engine_for(database_url)
    start = time.perf_counter()
    counts = seed_demo(engine)
    _report(counts, time.perf_counter() - start)
