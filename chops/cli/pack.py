"""``chops pack new NAME``: write a working skeleton of a domain pack (``chops.domain.scaffold``)."""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def pack() -> None:
    """Domain packs: a business's system as a plug-in of its own (docs/packs.md)."""


@pack.command("new")
@click.argument("name")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=Path("apis"),
              show_default=True, help="the folder the pack's package NAME/ is written into")
def new(name: str, directory: Path) -> None:
    """Write the skeleton pack NAME: its tables and baseline migration, load/export and demo data, unit of work and
    repositories, a look-up and a confirmed write, checks, profile, pack, catalog, router examples, prompts folder
    and tests. It installs, migrates, seeds and answers as it is; then make it the business's own."""
    from chops.domain.scaffold import PackExists, module_of, new_pack

    try:
        written = new_pack(name, directory)
    except (ValueError, PackExists) as exc:
        raise click.ClickException(str(exc)) from None
    target = directory / name
    for path in written:
        click.echo(f"  {path}")
    module = module_of(name, directory)
    click.echo(f"""wrote the {name} pack ({len(written)} files) in {target}. Next:
  1. register it in pyproject.toml, then reinstall (pip install -e .):
       [project.entry-points."chops.domains"]
       {name} = "{module}.pack:pack"
       [tool.setuptools.package-data]
       "{module}" = ["*.jsonl", "*.md", "prompts/*", "locale/*/LC_MESSAGES/*.po", "migrations/versions/*.py"]
  2. pytest {target / 'tests'}
  3. chops db upgrade --domain {name} && chops db seed-demo --domain {name}
  4. make it the business's own: docs/packs.md""")
