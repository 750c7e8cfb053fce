"""The ``chops`` command. Each sub-command lives in its own module of this package."""

from __future__ import annotations

import click

from chops.cli import api, ask, db, eval_cmd, guides, llm, pack, router, serve, staff


@click.group()
def main() -> None:
    """CHOPS: chat with customer profile systems."""


main.add_command(db.db)
main.add_command(api.api)
main.add_command(guides.index)
main.add_command(guides.retrieve)
main.add_command(guides.guides_group)
main.add_command(llm.model)
main.add_command(llm.llm)
main.add_command(ask.ask)
main.add_command(serve.serve)
main.add_command(staff.staff)
main.add_command(router.router)
main.add_command(pack.pack)
main.add_command(eval_cmd.eval_group)
