"""``chops staff``: the named accounts staff sign in to the console with."""

from __future__ import annotations

import click

from chops.cli.db import database_url_option, engine_for


def _accounts(database_url: str | None):
    from chops.staff_accounts import StaffAccounts

    return StaffAccounts(engine_for(database_url))


def _fail(exc) -> click.ClickException:
    return click.ClickException(f"{exc.code}: {exc.message}")


@click.group()
def staff() -> None:
    """Add, list and disable staff accounts."""


@staff.command("add")
@click.argument("name")
@click.option("--display-name", default=None, help="the name users see on staff messages (default: NAME)")
@click.option("--password-stdin", is_flag=True,
              help="read the password from the first line of standard input (scripts) instead of a prompt")
@database_url_option
def add(name: str, display_name: str | None, password_stdin: bool, database_url: str | None) -> None:
    """Add the staff account NAME. The password is asked for (twice, hidden), or read from standard
    input with --password-stdin; it is never a command-line argument (those show up in `ps`)."""
    from chops.staff_accounts import StaffError

    if password_stdin:
        password = click.get_text_stream("stdin").readline().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        account = _accounts(database_url).add(name, password, display_name)
    except StaffError as exc:
        raise _fail(exc) from None
    click.echo(f"added staff account {account.name} ({account.display_name})")


@staff.command("list")
@database_url_option
def list_accounts(database_url: str | None) -> None:
    """Every account: name, display name, created (UTC), status."""
    for a in _accounts(database_url).list():
        status = "disabled" if a.disabled else "active"
        click.echo(f"{a.name}\t{a.display_name}\t{a.created_at:%Y-%m-%d %H:%M:%S}\t{status}")


@staff.command("disable")
@click.argument("name")
@database_url_option
def disable(name: str, database_url: str | None) -> None:
    """Disable the account NAME: it can no longer sign in, and its console sessions end."""
    from chops.staff_accounts import StaffError

    try:
        _accounts(database_url).disable(name)
    except StaffError as exc:
        raise _fail(exc) from None
    click.echo(f"disabled staff account {name}")
