"""The guide library on disk: stored files, immutable index versions and the one pointer that names
the live version.

Layout of a library's ``root``::

    files/<sha256><suffix>   the bytes of every indexed document, by content (never changed)
    versions/v000007/        one whole index: manifest.json, {short,long}.chunks.json, {short,long}.vectors.npy
    CURRENT                  the live version's name, replaced with os.replace (the swap)
    lock                     flock'ed while a version is built: one re-index at a time, across processes

A version directory is written under a temporary name and renamed into place whole, then ``CURRENT`` is
replaced, so a reader sees the old version or the new one, never a part. After a swap the two newest
versions are kept (a reader that has just read the old pointer can still load it); older versions,
crashed builds' leftovers and files no kept version uses are removed.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from chops.retrieval.ingest import Chunk

log = logging.getLogger(__name__)

SIZES = ("short", "long")
KEEP_VERSIONS = 2
_VERSION = re.compile(r"^v(\d{6,})$")


class VersionStore:
    """Reads and writes the versions of one library root."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def pointer(self) -> str | None:
        """The live version's name, or None before the first version."""
        try:
            return (self.root / "CURRENT").read_text().strip() or None
        except FileNotFoundError:
            return None

    def manifest(self, version: str | None) -> dict | None:
        """The manifest of ``version``; None when there is none or it cannot be read."""
        if not version:
            return None
        try:
            return json.loads((self.root / "versions" / version / "manifest.json").read_text())
        except (OSError, ValueError) as exc:
            log.warning("guide version %s of %s unreadable (%s)", version, self.root, exc)
            return None

    def arrays(self, version: str) -> tuple[dict[str, list[Chunk]], dict[str, np.ndarray]]:
        """The chunks and vectors of ``version`` per size (``OSError``/``ValueError`` when damaged)."""
        where = self.root / "versions" / version
        chunks = {s: [Chunk(**c) for c in json.loads((where / f"{s}.chunks.json").read_text())] for s in SIZES}
        vectors = {s: np.load(where / f"{s}.vectors.npy") for s in SIZES}
        for s in SIZES:
            if vectors[s].ndim != 2 or vectors[s].shape[0] != len(chunks[s]):
                raise ValueError(f"{s}: {vectors[s].shape} vectors for {len(chunks[s])} chunks")
        return chunks, vectors

    def file_path(self, name: str, sha256: str) -> Path:
        """Where the stored bytes of document ``name`` with hash ``sha256`` live."""
        return self.root / "files" / f"{sha256}{Path(name).suffix.lower()}"

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the library's build lock (blocks while another thread or process builds)."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "lock", "a+") as fh:  # flock: separate opens exclude threads and processes alike
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def store_file(self, source: Path, name: str, sha256: str) -> None:
        """Copy a document's bytes into ``files/`` (once per content)."""
        target = self.file_path(name, sha256)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{uuid.uuid4().hex}.tmp")
            shutil.copyfile(source, tmp)
            os.replace(tmp, target)

    def next_version(self) -> str:
        """The name of the version to build next (call with the lock held)."""
        folder = self.root / "versions"
        numbers = [int(m.group(1)) for p in folder.glob("v*") if (m := _VERSION.match(p.name))] \
            if folder.is_dir() else []
        return f"v{1 + max(numbers, default=0):06d}"

    def publish(self, version: str, manifest: dict, chunks: dict[str, list[Chunk]],
                vectors: dict[str, np.ndarray]) -> None:
        """Write ``version`` beside the live one, swap the pointer to it, remove what is no longer kept."""
        versions = self.root / "versions"
        tmp = versions / f".tmp-{uuid.uuid4().hex}"
        tmp.mkdir(parents=True)
        for s in SIZES:
            (tmp / f"{s}.chunks.json").write_text(json.dumps([c.to_dict() for c in chunks[s]], indent=0))
            np.save(tmp / f"{s}.vectors.npy", vectors[s])
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
        os.rename(tmp, versions / version)  # the whole version appears at once
        pointer = self.root / f".CURRENT.{uuid.uuid4().hex}"
        with open(pointer, "w") as fh:
            fh.write(version)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(pointer, self.root / "CURRENT")  # the swap: readers see the old name or the new one
        self._clean(version)

    def _clean(self, live: str) -> None:
        versions = self.root / "versions"
        ordered = sorted((p.name for p in versions.iterdir() if _VERSION.match(p.name)))
        keep = set(ordered[-KEEP_VERSIONS:]) | {live}
        for path in versions.iterdir():
            if path.name not in keep:  # older versions and crashed builds' leftovers (we hold the lock)
                shutil.rmtree(path, ignore_errors=True)
        used = {self.file_path(name, meta["sha256"]).name for version in keep
                for name, meta in ((self.manifest(version) or {}).get("documents") or {}).items()}
        for path in (self.root / "files").glob("*"):
            if path.name not in used:
                path.unlink(missing_ok=True)
