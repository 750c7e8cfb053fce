"""Guide excerpts for the classifier (short) and the guide executor (long), searched once per turn."""

from __future__ import annotations

from typing import Protocol

from chops.pipeline.context import TurnContext
from chops.pipeline.prompting import clip, fragment
from chops.settings import Settings

EXCERPT_CLIP = {"short": 320, "long": 1300}  # safety caps: chunk sizes are set by the index


class GuideVersion(Protocol):
    """One fixed version of the guide index."""

    version: str | None

    def search(self, query: str, k: int = 3, size: str = "long") -> list: ...


class GuideSource(Protocol):
    """Where a turn gets its guide version: ``GuideLibrary`` (the live one) or a fixed ``GuideIndex``."""

    def current(self) -> GuideVersion: ...


class Retriever:
    """Wraps ``GuideIndex.search``; results are kept on the turn (retries reuse them) and traced.

    ``index`` is a ``GuideLibrary`` or a fixed ``GuideIndex``: a turn takes ``index.current()`` once and
    searches only that version, so a re-index swapped in mid-turn never mixes two versions.
    Stateless itself, so one ``Agent`` can serve several threads.
    """

    def __init__(self, index: GuideSource | None, settings: Settings) -> None:
        self.index = index
        self.k = {"short": settings.k_short, "long": settings.k_long}
        self.classifier_chunks = settings.classifier_chunks

    def search(self, ctx: TurnContext, size: str) -> list:
        """The chunks for ``ctx.text`` of ``size`` ("short"/"long"); [] when there is no index."""
        if size not in ctx.chunks:
            if ctx.guides is None and self.index is not None:
                ctx.guides = self.index.current()
            chunks = ctx.guides.search(ctx.text, k=self.k[size], size=size) if ctx.guides is not None else []
            ctx.chunks[size] = chunks
            ctx.trace.step("retrieve", size=size, version=ctx.guides.version if ctx.guides else None, chunks=[
                {"file": c.file, "page": c.page, "score": round(float(c.score), 4), "text": clip(c.text, 200)}
                for c in chunks])
        return ctx.chunks[size]

    def render(self, chunks: list, size: str) -> str:
        """Numbered excerpts (1-based) for a prompt."""
        if not chunks:
            return fragment("no_chunks")
        return "\n".join(fragment("chunk", n=i, file=c.file, page=c.page, text=clip(c.text, EXCERPT_CLIP[size]))
                         for i, c in enumerate(chunks, 1))

    def short_text(self, ctx: TurnContext) -> str:
        """The classifier's excerpt section, or "" when ``classifier_chunks`` is off."""
        if not self.classifier_chunks:
            return ""
        return fragment("classifier_chunks", chunks=self.render(self.search(ctx, "short"), "short"))

    def long_text(self, ctx: TurnContext) -> tuple[list, str]:
        """Long excerpts and their rendering for the executor."""
        chunks = self.search(ctx, "long")
        return chunks, self.render(chunks, "long")
