"""A pristine database per conversation: the pack's dump loaded ONCE into a template SQLite file, and
every conversation (and every grading replay) on a byte copy of it.

The same reasons as ``eval/isolation.py`` (a copy takes milliseconds, cannot share state with another
task, not even the agent's own tables, and each worker thread holds its own), for any domain pack:
``chops.migrate.upgrade`` (the agent's tables and the pack's) then ``pack.load`` build the template.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from eval.isolation import fold_wal, private_copy

TEMPLATE_NAME = "template.db"


def dump_fingerprint(dump_dir: Path, pack_name: str) -> str:
    """A hash of the pack's name and the dump files' names, sizes and modification times."""
    h = hashlib.sha256(pack_name.encode())
    for path in sorted(p for p in Path(dump_dir).rglob("*") if p.is_file()):
        st = path.stat()
        h.update(f"{path.relative_to(dump_dir)}:{st.st_size}:{int(st.st_mtime)}\n".encode())
    return h.hexdigest()[:16]


class PackTemplate:
    """The template database of one pack and dump, and private copies of it."""

    def __init__(self, pack: Any, path: Path, load_s: float) -> None:
        self.pack, self.path, self.load_s = pack, path, load_s

    @classmethod
    def build(cls, pack: Any, dump_dir: Path, work_dir: Path) -> "PackTemplate":
        """Load ``dump_dir`` (what ``pack.load`` reads) into ``work_dir/template.db``; a template built from
        the same pack and dump (``template.json``) is reused, so a resumed run does not reload."""
        from chops.db import make_engine
        from chops.migrate import upgrade

        work_dir.mkdir(parents=True, exist_ok=True)
        path, meta_path = work_dir / TEMPLATE_NAME, work_dir / "template.json"
        fp = dump_fingerprint(dump_dir, pack.name)
        t0 = time.perf_counter()
        if not (path.is_file() and meta_path.is_file()
                and json.loads(meta_path.read_text()).get("fingerprint") == fp):
            for stale in (path, meta_path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                stale.unlink(missing_ok=True)
            engine = make_engine(f"sqlite:///{path}")
            try:
                upgrade(engine, pack)  # the pack's tables and the agent's own (conversations, audit)
                pack.load(engine, Path(dump_dir))
            finally:
                engine.dispose()
            fold_wal(path)
            meta_path.write_text(json.dumps({"fingerprint": fp, "pack": pack.name, "dump": str(dump_dir)}))
        return cls(pack, path, time.perf_counter() - t0)

    @contextmanager
    def fresh(self, scratch_dir: Path | None = None) -> Iterator[sa.Engine]:
        """An engine on a private copy of the template; the copy is deleted on exit."""
        from chops.db import make_engine

        with private_copy(self.path, scratch_dir, "task") as url:
            engine = make_engine(url)
            try:
                yield engine
            finally:
                engine.dispose()
