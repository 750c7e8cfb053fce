"""The guide library: a versioned set of guide documents, re-indexed incrementally, swapped atomically.

A re-index (``apply``) reads the live version, parses and embeds only the documents that are new or
changed (by sha256), copies the other documents' chunks and vectors, and publishes a new version
(``chops.retrieval.versions``). ``current()`` reads the pointer (one tiny file) on every call and loads
a version the first time it sees it, so every process sharing the data directory serves the same
version; a question keeps the ``GuideIndex`` it got, so it never sees a mix of versions.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from chops.retrieval.embedders import Embedder, make_embedder
from chops.retrieval.index import GuideIndex, Progress, sha256_file
from chops.retrieval.ingest import (CHUNKER_VERSION, Chunk, DocumentError, GuideError, Page, Skipped, chunk_pages,
                                    guide_files, guide_type, read_document)
from chops.retrieval.versions import SIZES, VersionStore
from chops.settings import Settings

log = logging.getLogger(__name__)

FORMAT = 2
NAME_MAX = 200
_BAD_NAME = re.compile(r"[/\\\x00-\x1f\x7f]")


@dataclass
class Incoming:
    """A checked document ready to index: its name, where its bytes are, their hash and its pages."""

    name: str
    path: Path
    sha256: str
    size: int
    pages: list[Page]


@dataclass
class Update:
    """What one re-index changed; ``version`` is the live version afterwards."""

    version: str | None
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)  # set when the skipped files differ from before
    embedded: int = 0  # chunks embedded (both sizes)
    published: bool = False  # a new version was swapped in


def check_name(name: str) -> str:
    """``name`` when it can name a guide (a plain file name of a supported type), else ``DocumentError``."""
    if not name or name != name.strip() or name.startswith(".") or len(name) > NAME_MAX or _BAD_NAME.search(name):
        raise DocumentError("invalid_field", f"a guide name is a plain file name of at most {NAME_MAX} characters")
    guide_type(name)
    return name


def prepare(name: str, path: Path, max_bytes: int | None = None) -> Incoming:
    """Check and parse one file to be indexed as ``name``; ``DocumentError`` (``invalid_field``,
    ``unsupported_type``, ``too_large``, ``encrypted``, ``no_text``, ``unreadable``) when it cannot be."""
    check_name(name)
    size = path.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise DocumentError("too_large", f"{name} is {size} bytes; the limit is {max_bytes}")
    return Incoming(name, path, sha256_file(path), size, read_document(path, name))


class GuideLibrary:
    """The versioned guide index under ``root``. Thread-safe; processes share it through the files."""

    def __init__(self, root: Path, settings: Settings, embedder: Embedder | None = None):
        self.root = Path(root)
        self.store = VersionStore(self.root)
        self.settings = settings
        self.embedder = embedder or make_embedder(settings)
        self._live: GuideIndex | None = None
        self._guard = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None

    @classmethod
    def for_service(cls, settings: Settings, embedder: Embedder | None = None, *, seed: bool = True) -> GuideLibrary:
        """The library the service, ``chops retrieve`` and ``chops guides`` share (``data_dir/guides``).
        With ``seed``, a library without a version yet starts as a copy of ``CHOPS_GUIDES_DIR``, and the
        live version is loaded now (rebuilt if the embedder or chunk sizes changed), not at the first question."""
        library = cls(settings.data_dir / "guides", settings, embedder)
        if not seed:
            return library
        published = False
        if library.store.pointer() is None:
            try:
                published = library.sync(settings.guides_dir).published
            except GuideError as exc:  # no demo guides: start empty; staff upload guides
                log.warning("guide library starts empty: %s", exc)
                published = library.apply([]).published
        index = library.current()
        index.rebuilt = index.rebuilt or published
        return library

    # ------------------------------------------------------------------ reading
    def current(self) -> GuideIndex:
        """The live version's index (loaded once per version); an empty index before the first version.
        A version built with other settings (embedder, chunk sizes) or damaged is rebuilt first."""
        name = self.store.pointer()
        live = self._live
        if live is not None and live.version == name:
            return live
        with self._guard:
            repaired = False
            for _ in range(3):  # the pointer may move on while we load; the old version may then be gone
                index = self._load(name) if name else self._index({s: [] for s in SIZES}, {}, {"version": None})
                if index is not None:
                    index.rebuilt = repaired
                    self._live = index
                    return index
                if self.store.pointer() == name:
                    repaired = self.apply([], rebuild=True).published
                name = self.store.pointer()
        raise GuideError(f"guide library {self.root}: version {name} cannot be loaded")

    def search(self, query: str, k: int = 3, size: str = "long", mode=None) -> list[Chunk]:
        """Search the live version (a caller that searches twice should hold ``current()`` instead)."""
        return self.current().search(query, k=k, size=size, mode=mode)

    def _compatible(self, manifest: dict) -> bool:
        return manifest.get("format") == FORMAT and manifest.get("embedder") == self.embedder.name and \
            manifest.get("chunker") == CHUNKER_VERSION and manifest.get("chunk_sizes") == self._sizes()

    def _sizes(self) -> dict[str, int]:
        return {"short": self.settings.chunk_short, "long": self.settings.chunk_long}

    def _load(self, name: str) -> GuideIndex | None:
        manifest = self.store.manifest(name)
        if manifest is None or not self._compatible(manifest):
            return None
        try:
            chunks, vectors = self.store.arrays(name)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            log.warning("guide version %s of %s is damaged (%s)", name, self.root, exc)
            return None
        return self._index(chunks, vectors, manifest)

    def _index(self, chunks, vectors, manifest) -> GuideIndex:
        return GuideIndex(self.embedder, manifest, chunks, vectors, mode=self.settings.retrieval_mode)

    # ------------------------------------------------------------------ changing
    def sync(self, folder: Path, *, force: bool = False, progress: Progress | None = None) -> Update:
        """Make the indexed set match ``folder`` (added, changed, removed by sha256); unreadable files
        are skipped and recorded. A missing folder, one without guide files or with none readable is
        a ``GuideError`` (nothing changes)."""
        files = guide_files(folder)
        live = self.store.manifest(self.store.pointer()) or {}
        known = {n: m["sha256"] for n, m in (live.get("documents") or {}).items()}
        known_bad = {s["file"]: s.get("sha256") for s in live.get("skipped") or []}
        incoming, skipped = [], []
        for path in files:
            sha = sha256_file(path)
            if not force and known.get(path.name) == sha:
                incoming.append(Incoming(path.name, path, sha, path.stat().st_size, []))  # unchanged: not parsed
                continue
            if not force and known_bad.get(path.name) == sha:
                skipped.append(next(Skipped(**s) for s in live["skipped"] if s["file"] == path.name))
                continue
            try:
                incoming.append(prepare(path.name, path))
            except DocumentError as exc:
                log.warning("skipping guide %s: %s", path.name, exc)
                skipped.append(Skipped(path.name, str(exc), sha))
        if not incoming:
            reasons = "; ".join(f"{s.file}: {s.reason}" for s in skipped)
            raise GuideError(f"none of the {len(files)} guide files in {folder} could be read ({reasons})")
        remove = set(known) - {inc.name for inc in incoming}
        return self.apply(incoming, remove, rebuild=force, skipped=skipped, progress=progress)

    def submit(self, incoming: list[Incoming], remove: set[str] = frozenset(), *,
               discard_sources: bool = False) -> Future:
        """``apply`` on this library's one background thread: uploads queue behind each other. With
        ``discard_sources`` the incoming files (temporary uploads) are deleted once it is done."""
        def job() -> Update:
            try:
                return self.apply(incoming, remove)
            finally:
                for inc in incoming if discard_sources else []:
                    inc.path.unlink(missing_ok=True)

        with self._guard:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guides-reindex")
        return self._worker.submit(job)

    def apply(self, incoming: list[Incoming], remove: set[str] = frozenset(), *, rebuild: bool = False,
              skipped: list[Skipped] | None = None, progress: Progress | None = None) -> Update:
        """Publish a version with ``incoming`` added or replaced and ``remove`` removed. Unchanged
        documents (same name and sha256) are not parsed or embedded again; when nothing changed, no new
        version. ``rebuild`` re-embeds every document from its stored file. ``skipped`` (a folder
        sync's unreadable files) is recorded in the manifest."""
        with self.store.locked():
            live_name = self.store.pointer()
            live = self.store.manifest(live_name) or {"documents": {}, "skipped": []}
            reusable = not rebuild and live_name is not None and self._compatible(live)
            docs = {name: dict(meta) for name, meta in live["documents"].items()}
            update, todo = Update(live_name), {}
            for inc in incoming:
                old = docs.get(inc.name)
                if old is not None and old["sha256"] == inc.sha256 and reusable:
                    continue
                (update.changed if old is not None else update.added).append(inc.name)
                todo[inc.name] = inc if inc.pages else prepare(inc.name, inc.path)
            update.removed = sorted(n for n in remove if n in docs and n not in todo)
            for name in update.removed:
                del docs[name]
            if not reusable:  # everything is embedded again, from the stored files
                for name in [n for n in docs if n not in todo]:
                    stored = self._stored(name, docs[name])
                    if stored is None:
                        del docs[name]
                    else:
                        todo[name] = stored
            recorded = live.get("skipped", []) if skipped is None else [vars(s) for s in skipped]
            if recorded != live.get("skipped", []):
                update.skipped = [Skipped(**s) for s in recorded]
            if reusable and not (todo or update.removed or update.skipped):
                return update  # nothing changed: no new version
            self._build(live, docs, todo, recorded, reusable, update, progress)
            return update

    def _stored(self, name: str, meta: dict) -> Incoming | None:
        path = self.store.file_path(name, meta["sha256"])
        try:
            return Incoming(name, path, meta["sha256"], meta["size"], read_document(path, name))
        except (OSError, DocumentError) as exc:
            log.error("guide %s cannot be re-indexed from %s (%s); it is left out", name, path, exc)
            return None

    def _build(self, live: dict, docs: dict, todo: dict[str, Incoming], skipped: list, reusable: bool,
               update: Update, progress: Progress | None) -> None:
        started = time.perf_counter()
        sizes = self._sizes()
        fresh = {s: {n: chunk_pages(todo[n].pages, sizes[s]) for n in sorted(todo)} for s in SIZES}
        texts = {s: [c.text for piece in fresh[s].values() for c in piece] for s in SIZES}
        total = len(texts["short"]) + len(texts["long"])
        new_vectors = {s: self._embed(texts[s], progress, total, len(texts["short"]) if s == "long" else 0)
                       for s in SIZES}
        update.embedded = total
        old_chunks, old_vectors = self.store.arrays(update.version) if reusable and docs.keys() - todo.keys() \
            else ({}, {})
        version, now = self.store.next_version(), time.strftime("%Y-%m-%dT%H:%M:%S%z")
        for name, inc in todo.items():
            self.store.store_file(inc.path, name, inc.sha256)
            kept = {} if name in update.added or name in update.changed else docs.get(name, {})
            docs[name] = {"sha256": inc.sha256, "type": guide_type(name), "size": inc.size, "pages": len(inc.pages),
                          "uploaded_at": kept.get("uploaded_at", now), "version": kept.get("version", version)}
        chunks, vectors, counts = {}, {}, {name: {} for name in docs}
        for s in SIZES:
            rows, parts, fresh_at, old_at = [], [], 0, _starts(live["documents"], s) if reusable else {}
            for name in sorted(docs):
                if name in todo:
                    piece = fresh[s][name]
                    parts.append(new_vectors[s][fresh_at:fresh_at + len(piece)])
                    fresh_at += len(piece)
                else:  # unchanged: its chunks and vectors are copied from the live version
                    start, n = old_at[name], live["documents"][name]["chunks"][s]
                    piece = old_chunks[s][start:start + n]
                    parts.append(old_vectors[s][start:start + n])
                counts[name][s] = len(piece)
                rows.extend(piece)
            chunks[s] = rows
            vectors[s] = np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, 1), np.float32)
        manifest = {"format": FORMAT, "version": version, "embedder": self.embedder.name, "chunk_sizes": sizes,
                    "chunker": CHUNKER_VERSION,
                    "documents": {name: {**docs[name], "chunks": counts[name]} for name in sorted(docs)},
                    "skipped": skipped, "pages": sum(d["pages"] for d in docs.values()),
                    "chunks": {s: len(chunks[s]) for s in SIZES}, "built_at": now,
                    "build_seconds": round(time.perf_counter() - started, 3)}
        self.store.publish(version, manifest, chunks, vectors)
        update.version, update.published = version, True

    def _embed(self, texts: list[str], progress: Progress | None, total: int, done: int) -> np.ndarray:
        parts = []
        for start in range(0, len(texts), 32):  # batches only so a progress bar moves
            parts.append(self.embedder.embed(texts[start:start + 32]))
            if progress:
                progress("embed", done + start + len(parts[-1]), total)
        return np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, 1), np.float32)


def _starts(documents: dict, size: str) -> dict[str, int]:
    """Where each document's chunks start in a version's arrays (documents are stored by name)."""
    starts, at = {}, 0
    for name in sorted(documents):
        starts[name] = at
        at += documents[name]["chunks"][size]
    return starts
