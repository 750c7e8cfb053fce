"""``chops serve``: the web service on Werkzeug's development server.

Production runs the same app under gunicorn instead:
``gunicorn -w 1 -k gthread --threads 16 -b 127.0.0.1:8000 'chops.web.app:create_app()'``.
"""

from __future__ import annotations

import click


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="interface to listen on")
@click.option("--port", default=8000, show_default=True, type=int, help="TCP port")
@click.option("--database-url", default=None, metavar="URL", help="SQLAlchemy URL (overrides CHOPS_DATABASE_URL)")
@click.option("--demo/--no-demo", default=None,
              help="demo mode: unsigned nicknames in the widget, open console (default: CHOPS_DEMO_MODE)")
def serve(host: str, port: int, database_url: str | None, demo: bool | None) -> None:
    """Run the web service (development server): the widget at /widget, the console at /console."""
    from werkzeug.serving import run_simple

    from chops.db import make_engine
    from chops.domain.pack import load_pack
    from chops.migrate import upgrade
    from chops.settings import get_settings
    from chops.web.app import create_app

    settings = get_settings(database_url=database_url, demo_mode=demo)
    engine = make_engine(settings.resolved_database_url)
    pack = load_pack(settings.domain)
    upgrade(engine, pack)  # a fresh SQLite file becomes a working database; an older one is upgraded
    if settings.demo_mode and not pack.has_users(engine):  # only ever into an empty system: never overwrites data
        pack.seed_demo(engine)
        click.echo(f"demo mode: seeded the {pack.name} demo users")
    click.echo("building/loading the guide index ...")
    app = create_app(settings, engine=engine, pack=pack)
    base = f"http://{host}:{port}"
    click.echo(f"widget:  {base}/widget" + ("  (demo mode: chat as any nickname, e.g. demo_leader)"
                                             if settings.demo_mode else "  (needs ?token=<signed user token>)"))
    click.echo(f"console: {base}/console" + ("" if settings.staff_api_key or settings.demo_mode
                                               else "  (disabled: set CHOPS_STAFF_API_KEY)"))
    run_simple(host, port, app, threaded=True, use_reloader=False)
