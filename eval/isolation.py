"""A pristine database for every case: the CPHOS dump is loaded ONCE into a template SQLite file,
and each case runs on a byte copy of that file.

Why a file copy: loading the dump (~13k rows) takes seconds, a copy of the ~3 MB file takes
milliseconds, and it is trivially correct — the copy cannot share state with another case, not
even the agent's own tables (conversations, audit log, idempotency records), and several worker
threads can each hold their own copy. A MariaDB transaction rolled back per case would not be:
the pipeline commits for real, in its own transactions. The "before" snapshot is taken once from
the template, since every copy starts byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from apis.cphos.state import Snapshot, snapshot
from apis.cphos.tables import CPHOS_TABLES

TEMPLATE_NAME = "template.db"
Loader = Callable[[sa.Engine, Path], object]


def default_loader(engine: sa.Engine, dataset_dir: Path) -> object:
    """Create the schema and load the CPHOS dump with the loader behind ``chops db load-cphos``."""
    from apis.cphos.db import init_schema
    from apis.cphos.loaders import load_cphos

    init_schema(engine)  # the agent's own tables too (audit log, conversations, approvals)
    return load_cphos(engine, Path(dataset_dir) / "database")


def dataset_fingerprint(dataset_dir: Path) -> str:
    """A hash of the dump files' names, sizes and modification times (a changed dump → new template)."""
    h = hashlib.sha256()
    for path in sorted((Path(dataset_dir) / "database").rglob("*.json")):
        st = path.stat()
        h.update(f"{path.relative_to(dataset_dir)}:{st.st_size}:{int(st.st_mtime)}\n".encode())
    return h.hexdigest()[:16]


def fold_wal(path: Path) -> None:
    """Checkpoint and leave WAL mode so the template is one self-contained file to copy."""
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("PRAGMA journal_mode=DELETE")
    finally:
        con.close()


class Template:
    """The loaded pristine database plus its snapshot of the ``cmf_tp_*`` tables (the common "before")."""

    def __init__(self, path: Path, before: Snapshot, load_s: float):
        self.path = path
        self.before = before
        self.load_s = load_s

    @classmethod
    def build(cls, dataset_dir: Path, work_dir: Path, loader: Loader | None = None) -> "Template":
        """Load ``dataset_dir/database`` into ``work_dir/template.db``, reusing a template built from
        the same dump (fingerprint in ``template.json``) — so a resumed run does not reload."""
        from chops.db import make_engine

        work_dir.mkdir(parents=True, exist_ok=True)
        path, meta_path = work_dir / TEMPLATE_NAME, work_dir / "template.json"
        fp = dataset_fingerprint(dataset_dir)
        t0 = time.perf_counter()
        reuse = path.is_file() and meta_path.is_file() and json.loads(meta_path.read_text()).get("fingerprint") == fp
        if not reuse:
            for stale in (path, meta_path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                stale.unlink(missing_ok=True)
            engine = make_engine(f"sqlite:///{path}")
            try:
                (loader or default_loader)(engine, Path(dataset_dir))
            finally:
                engine.dispose()
            fold_wal(path)
            meta_path.write_text(json.dumps({"fingerprint": fp, "dataset": str(dataset_dir)}))
        load_s = time.perf_counter() - t0
        engine = make_engine(f"sqlite:///{path}")
        try:
            present = set(sa.inspect(engine).get_table_names())
            if missing := [tb.name for tb in CPHOS_TABLES if tb.name not in present]:
                raise RuntimeError(f"the template {path} lacks the tables {', '.join(missing)}")
            before = snapshot(engine)
        finally:
            engine.dispose()
        fold_wal(path)
        return cls(path, before, load_s)

    @contextmanager
    def fresh_copy(self, scratch_dir: Path | None = None) -> Iterator[str]:
        """A SQLAlchemy URL of a private copy of the template, deleted on exit."""
        with private_copy(self.path, scratch_dir, "case") as url:
            yield url


@contextmanager
def private_copy(path: Path, scratch_dir: Path | None, name: str) -> Iterator[str]:
    """A SQLAlchemy URL of a private copy of the SQLite file ``path`` (in ``scratch_dir``), deleted on exit."""
    if scratch_dir is not None:
        scratch_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{name}-", dir=scratch_dir) as tmp:
        dest = Path(tmp) / f"{name}.db"
        shutil.copyfile(path, dest)
        yield f"sqlite:///{dest}"
