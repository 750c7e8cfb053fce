"""``chops index build``, ``chops retrieve`` and ``chops guides``: the guide index from the command line.

Without ``--guides`` they work on the service's guide library (``data_dir/guides``, the version every
service worker answers from); with ``--guides DIR`` on that folder's own index.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

GUIDES_HELP = "a guide folder to index and search instead of the service's guide library"


def _progress_bar(show: bool):
    """A (callback, close) pair drawing a progress bar on stderr while chunks are embedded."""
    from tqdm import tqdm

    bar = None

    def progress(stage: str, done: int, total: int) -> None:
        nonlocal bar
        if not show:
            return
        if bar is None:
            bar = tqdm(total=total, desc="embedding guide chunks", unit="chunk", leave=False)
        bar.update(done - bar.n)

    return progress, lambda: bar is not None and bar.close()


def _fail(exc) -> click.ClickException:
    return click.ClickException(f"[{exc.code}] {exc}")


def _open_index(guides: Path | None, *, force: bool, show_progress: bool):
    """The live index of the service's library (seeded on first use), or of the folder ``guides``."""
    from chops.retrieval import GuideError, GuideIndex, GuideLibrary
    from chops.retrieval.embedders import EmbedderError
    from chops.settings import get_settings

    settings = get_settings()
    progress, close = _progress_bar(show_progress)
    try:
        if guides is not None:
            index, where = GuideIndex.load_or_build(guides, settings, force=force, progress=progress), guides
        else:
            library = GuideLibrary.for_service(settings)
            if force:
                library.apply([], rebuild=True, progress=progress)
                library.current().rebuilt = True
            index, where = library.current(), library.root
    except (GuideError, EmbedderError) as exc:
        raise _fail(exc) from exc
    finally:
        close()
    for skipped in index.skipped:
        click.echo(f"warning: skipped {skipped.file}: {skipped.reason}", err=True)
    return index, settings, where


@click.group()
def index() -> None:
    """Build the guide indexes."""


@index.command("build")
@click.option("--guides", type=click.Path(path_type=Path, file_okay=False), default=None, help=GUIDES_HELP)
@click.option("--force/--no-force", default=False, help="embed every guide again even when nothing changed")
def build(guides: Path | None, force: bool) -> None:
    """Bring the guide index up to date (only new or changed guides are read and embedded)."""
    idx, _, where = _open_index(guides, force=force, show_progress=True)
    m = idx.manifest
    state = "built" if idx.rebuilt else "up to date"
    click.echo(f"index {state}: {len(m['documents'])} guide(s), {m['pages']} page(s), "
               f"{m['chunks']['short']} short + {m['chunks']['long']} long chunks, embedder {m['embedder']}, "
               f"version {idx.version}")
    click.echo(f"saved in {where}")


@click.command()
@click.argument("question")
@click.option("--guides", type=click.Path(path_type=Path, file_okay=False), default=None, help=GUIDES_HELP)
@click.option("-k", "k", type=click.IntRange(1, 50), default=None, help="how many chunks (default k_long/k_short)")
@click.option("--size", type=click.Choice(["short", "long"]), default="long", show_default=True)
@click.option("--mode", type=click.Choice(["dense", "fused"]), default=None,
              help="ranking (default: CHOPS_RETRIEVAL_MODE)")
@click.option("--json", "as_json", is_flag=True, help="print a JSON list of {file, page, score, cosine, text}")
def retrieve(question: str, guides: Path | None, k: int | None, size: str, mode: str | None, as_json: bool) -> None:
    """Print the guide chunks nearest QUESTION, best first (from the live guide version)."""
    idx, settings, _ = _open_index(guides, force=False, show_progress=not as_json)
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


@click.group("guides")
def guides_group() -> None:
    """The service's guide library: list it, or make it match a folder."""


@guides_group.command("sync")
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False, exists=True))
def sync(folder: Path) -> None:
    """Make the indexed guides match FOLDER (by content hash); print what changed. Idempotent."""
    from chops.retrieval import GuideError, GuideLibrary
    from chops.retrieval.embedders import EmbedderError
    from chops.settings import get_settings

    progress, close = _progress_bar(True)
    try:
        update = GuideLibrary.for_service(get_settings(), seed=False).sync(folder, progress=progress)
    except (GuideError, EmbedderError) as exc:
        raise _fail(exc) from exc
    finally:
        close()
    for verb, names in (("added", update.added), ("changed", update.changed), ("removed", update.removed)):
        for name in names:
            click.echo(f"{verb} {name}")
    for skipped in update.skipped:
        click.echo(f"skipped {skipped.file}: {skipped.reason}")
    click.echo(f"version {update.version}" if update.published else f"nothing changed (version {update.version})")


@guides_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="print the live version's documents as JSON")
def list_guides(as_json: bool) -> None:
    """The guides of the live version: name, type, size, chunks, uploaded, version."""
    from chops.retrieval import GuideLibrary
    from chops.settings import get_settings

    idx = GuideLibrary.for_service(get_settings(), seed=False).current()
    docs = idx.manifest.get("documents", {})
    if as_json:
        click.echo(json.dumps({"version": idx.version, "guides": docs}, indent=2, ensure_ascii=False))
        return
    for name, d in docs.items():
        click.echo(f"{name}  {d['type']}  {d['size']} bytes  {d['chunks']['long']} long chunks  "
                   f"uploaded {d['uploaded_at']}  version {d['version']}")
    click.echo(f"version {idx.version}: {len(docs)} guide(s)")
