"""``chops api``: list and call the operations as a given user (for staff and scripts)."""

from __future__ import annotations

import json

import click

from chops.cli.db import database_url_option, engine_for


def _echo_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


@click.group()
def api() -> None:
    """List and call the operations."""


@api.command("list")
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of text")
def list_ops(as_json: bool) -> None:
    """The operations with their flags and argument JSON schemas."""
    from chops.cli.db import pack_for

    operations = pack_for(None).api(None).operations
    items = [{"name": op.name, "description": op.description, "writes": op.writes, "admin_only": op.admin_only,
              "args_schema": op.json_schema()} for op in operations.values()]
    if as_json:
        _echo_json(items)
        return
    for item in items:
        flags = ("write" if item["writes"] else "read") + (", admin only" if item["admin_only"] else "")
        click.echo(f"{item['name']} [{flags}] — {item['description']}")
        click.echo("  args schema: " + json.dumps(item["args_schema"], ensure_ascii=False))


@api.command("call")
@click.argument("operation")
@click.option("--as", "nickname", required=True, help="the acting user's nickname")
@click.option("--args", "args_json", default="{}", show_default=True, help="arguments as a JSON object")
@click.option("--dry-run", is_flag=True, help="run a write in a rolled-back transaction and show its diff")
@click.option("--idempotency-key", default=None, help="a repeat with the same key replays the first result")
@click.option("--request-id", default=None, help="recorded in the audit log")
@database_url_option
def call(operation: str, nickname: str, args_json: str, dry_run: bool, idempotency_key: str | None,
         request_id: str | None, database_url: str | None) -> None:
    """Call OPERATION as --as NICKNAME and print the result as one JSON object
    (outcome, message, diff, data, ...). The exit status is 0 for every outcome."""
    from chops.cli.db import pack_for

    try:
        args = json.loads(args_json)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--args") from None
    result = pack_for(None).api(engine_for(database_url)).call(operation, nickname, args, dry_run=dry_run,
                                                idempotency_key=idempotency_key, request_id=request_id)
    _echo_json(result.model_dump(mode="json"))


@api.command("profile")
@click.option("--as", "nickname", required=True, help="the user's nickname")
@click.option("--text", is_flag=True, help="the plain-text rendering the prompts use")
@database_url_option
def profile(nickname: str, text: bool, database_url: str | None) -> None:
    """Print the user's basic info (one query), or `null` when they are not in the system."""
    from chops.cli.db import pack_for

    prof = pack_for(None).api(engine_for(database_url)).profile(nickname)
    if text:
        click.echo(prof.describe() if prof else "not in the system")
    else:
        _echo_json(prof.model_dump() if prof else None)
