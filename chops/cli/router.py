"""``chops router train``: build the embedding router from the domain's labelled examples."""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def router() -> None:
    """The embedding router that decides most routes without a model call."""


@router.command("train")
@click.option("--examples", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="a JSONL file of {text, route}, trained on with the kit's conversational examples "
                   "(default: CHOPS_ROUTER_EXAMPLES, else the domain pack's)")
@click.option("--force", is_flag=True, help="Train again even when a router for these examples is built.")
@click.option("--domain", default=None, metavar="PACK", help="the domain pack (overrides CHOPS_DOMAIN)")
def train(examples: Path | None, force: bool, domain: str | None) -> None:
    """Train (or find) the router for the examples and the configured embedder; print where it is kept
    and its calibrated threshold."""
    from chops.cli.db import pack_for
    from chops.retrieval.embedders import make_embedder
    from chops.router import artefact_path, build_router, training_examples, training_files
    from chops.settings import get_settings

    settings = get_settings()
    path = examples or settings.router_examples or pack_for(domain).router_examples
    embedder = make_embedder(settings)
    built = build_router(settings.data_dir, path, embedder, rebuild=force)
    pairs = training_examples(path)
    routes = sorted({route for _, route in pairs})
    click.echo(f"{len(pairs)} examples of {len(routes)} routes from {' and '.join(map(str, training_files(path)))}")
    click.echo(f"threshold {built.threshold:.3f} (calibrated on every fourth example, held apart)")
    click.echo(f"router: {artefact_path(settings.data_dir, path, embedder.name)}")
