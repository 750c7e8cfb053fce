"""``chops index build`` and ``chops retrieve``: the guide index from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import click

GUIDES_HELP = "guide PDF directory (default: CHOPS_GUIDES_DIR, the demo guides/)"


def _open_index(guides: Path | None, *, force: bool, show_progress: bool):
    """Load or build the index of ``guides``, with a progress bar on stderr while embedding."""
    from tqdm import tqdm

    from chops.retrieval import GuideError, GuideIndex
    from chops.retrieval.embedders import EmbedderError
    from chops.settings import get_settings

    settings = get_settings()
    guides_dir = guides or settings.guides_dir
    bar = None

    def progress(stage: str, done: int, total: int) -> None:
        nonlocal bar
        if not show_progress:
            return
        if bar is None:
            bar = tqdm(total=total, desc="embedding guide chunks", unit="chunk", leave=False)
        bar.update(done - bar.n)

    try:
        index = GuideIndex.load_or_build(guides_dir, settings, force=force, progress=progress)
    except (GuideError, EmbedderError) as exc:
        raise click.ClickException(f"[{exc.code}] {exc}") from exc
    finally:
        if bar is not None:
            bar.close()
    for skipped in index.skipped:
        click.echo(f"warning: skipped {skipped.file}: {skipped.reason}", err=True)
    return index, settings


@click.group()
def index() -> None:
    """Build the guide indexes."""


@index.command("build")
@click.option("--guides", type=click.Path(path_type=Path, file_okay=False), default=None, help=GUIDES_HELP)
@click.option("--force/--no-force", default=False, help="rebuild even when the saved index is up to date")
def build(guides: Path | None, force: bool) -> None:
    """Read, chunk and embed the guide PDFs; save the index (skipped when already up to date)."""
    from chops.retrieval import index_dir_for

    idx, settings = _open_index(guides, force=force, show_progress=True)
    m = idx.manifest
    state = "built" if idx.rebuilt else "up to date"
    click.echo(f"index {state}: {len(m['files']) - len(idx.skipped)} PDF(s), {m['pages']} page(s), "
               f"{m['chunks']['short']} short + {m['chunks']['long']} long chunks, embedder {m['embedder']}")
    click.echo(f"saved in {index_dir_for(idx.guides_dir, settings)}")


@click.command()
@click.argument("question")
@click.option("--guides", type=click.Path(path_type=Path, file_okay=False), default=None, help=GUIDES_HELP)
@click.option("-k", "k", type=click.IntRange(1, 50), default=None, help="how many chunks (default k_long/k_short)")
@click.option("--size", type=click.Choice(["short", "long"]), default="long", show_default=True)
@click.option("--mode", type=click.Choice(["dense", "fused"]), default=None,
              help="ranking (default: CHOPS_RETRIEVAL_MODE)")
@click.option("--json", "as_json", is_flag=True, help="print a JSON list of {file, page, score, cosine, text}")
def retrieve(question: str, guides: Path | None, k: int | None, size: str, mode: str | None, as_json: bool) -> None:
    """Print the guide chunks nearest QUESTION, best first (builds the index if needed)."""
    idx, settings = _open_index(guides, force=False, show_progress=not as_json)
    k = k or (settings.k_long if size == "long" else settings.k_short)
    chunks = idx.search(question, k=k, size=size, mode=mode)
    if as_json:
        click.echo(json.dumps([c.to_dict() for c in chunks], indent=2, ensure_ascii=False))
        return
    if not chunks:
        click.echo("no matching guide text")
    for rank, chunk in enumerate(chunks, start=1):
        click.echo(f"#{rank}  {chunk.file}  page {chunk.page}  score {chunk.score:.4f}  cosine {chunk.cosine:.4f}")
        click.echo(f"    {chunk.text}\n")
