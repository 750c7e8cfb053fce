"""EcoAssistant's solution memory: verified solutions in ``chops_solution``, searched by USE embedding.

The table is the truth; a FAISS inner-product index over the live rows' vectors (unit length, so
inner product = cosine) finds the nearest past requests. The index is kept cheaply: each search
first adds the rows written since the last one (one indexed ``id > last`` query), a delete removes
its vector, and the rows found are read back with ``status = 'live'`` — so an entry deleted by
another worker is never shown either, even before this process's index forgets it.

A solution is stored once (``fingerprint``: the request and its solution); remembering it again is
a no-op, and a deleted one is never stored again. What may be stored is decided by the caller
(``chops.pipeline.agent``): never a read's data nor a profile answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import OrderedDict
from datetime import datetime, timezone
from typing import Any

import numpy as np
import sqlalchemy as sa

from chops import tables as t
from chops.records import Solution

log = logging.getLogger(__name__)

STATUSES = ("live", "deleted")
OVERFETCH = 4  # nearest vectors fetched per demonstration wanted: some may be deleted elsewhere
VECTOR_CACHE = 256  # request vectors kept: a turn embeds its request for recall and for remember


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def fingerprint(solution: Solution) -> str:
    """sha256 of what makes two solutions the same: request, route, operation, arguments, answer, source."""
    body = json.dumps([" ".join(solution.request.split()).lower(), solution.route, solution.operation,
                       solution.args, solution.answer, solution.source], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


class SolutionMemory:
    """Remember, recall, list and delete solutions over one engine and one embedder."""

    def __init__(self, engine: sa.Engine, embedder: Any, *, k: int = 2, floor: float = 0.75) -> None:
        """``embedder``: ``.name`` and ``.embed(texts)`` (``chops.retrieval.embedders``); ``k`` solutions
        at most, each with a cosine of at least ``floor``, are recalled."""
        self.engine, self.embedder, self.k, self.floor = engine, embedder, k, floor
        self._writer = engine.execution_options(sqlite_begin="immediate")
        self._lock = threading.Lock()
        self._index = None  # faiss.IndexIDMap2 over live rows' vectors, built on first use
        self._last_id = 0
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    # --- vectors ---------------------------------------------------------------------------
    def vector(self, text: str) -> np.ndarray:
        """The (1, dim) unit vector of ``text``; recent ones are cached."""
        with self._lock:
            if text in self._vectors:
                self._vectors.move_to_end(text)
                return self._vectors[text]
        vec = np.asarray(self.embedder.embed([text]), dtype=np.float32).reshape(1, -1)
        with self._lock:
            self._vectors[text] = vec
            while len(self._vectors) > VECTOR_CACHE:
                self._vectors.popitem(last=False)
        return vec

    def _sync(self) -> None:
        """Add the live rows stored since the last sync (by this or another process) to the index."""
        import faiss

        c = t.solution.c
        query = (sa.select(c.id, c.embedding).where(c.id > self._last_id, c.status == "live",
                                                    c.embedder == self.embedder.name).order_by(c.id))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        if not rows:
            return
        vectors = np.stack([np.frombuffer(r.embedding, dtype=np.float32) for r in rows])
        if self._index is None:
            self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(vectors.shape[1]))
        self._index.add_with_ids(vectors, np.array([r.id for r in rows], dtype=np.int64))
        self._last_id = max(r.id for r in rows)

    # --- the pipeline's side -----------------------------------------------------------------
    def recall(self, text: str) -> list[Solution]:
        """Up to ``k`` live solutions whose request is at least ``floor`` similar to ``text``, best first."""
        if self.k <= 0 or not text.strip():
            return []
        vec = self.vector(text)
        with self._lock:
            self._sync()
            if self._index is None or self._index.ntotal == 0:
                return []
            scores, ids = self._index.search(vec, min(self._index.ntotal, self.k * OVERFETCH))
        near = [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0 and s >= self.floor]
        if not near:
            return []
        live = {s.id: s for s in self._rows(t.solution.c.id.in_([i for i, _ in near]), t.solution.c.status == "live")}
        return [live[i].model_copy(update={"similarity": round(s, 4)}) for i, s in near if i in live][: self.k]

    def remember(self, solution: Solution) -> int | None:
        """Store ``solution`` (with its request's vector); its id, or None when it was stored before
        (live or deleted: a deleted solution is never stored again)."""
        vec = self.vector(solution.request)
        row = {"created_at": _now(), "request": solution.request, "route": solution.route,
               "operation": solution.operation,
               "args_json": None if solution.args is None else json.dumps(solution.args, ensure_ascii=False),
               "answer": solution.answer, "source": solution.source, "fingerprint": fingerprint(solution),
               "embedder": self.embedder.name, "embedding": vec.astype(np.float32).tobytes(), "status": "live"}
        try:
            with self._writer.begin() as conn:
                if conn.execute(sa.select(t.solution.c.id).where(t.solution.c.fingerprint == row["fingerprint"])).first():
                    return None
                return int(conn.execute(t.solution.insert().values(**row)).inserted_primary_key[0])
        except sa.exc.IntegrityError:  # the same solution stored concurrently: it is there once
            return None

    # --- the console's side ------------------------------------------------------------------
    def entries(self, status: str | None = "live", limit: int = 200) -> list[Solution]:
        """Solutions with ``status`` (None = all), newest first."""
        if status is not None and status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {status!r}")
        where = t.solution.c.status == status if status is not None else sa.true()
        return self._rows(where, order=t.solution.c.id.desc(), limit=limit)

    def get(self, solution_id: int) -> Solution | None:
        """One solution, or None."""
        rows = self._rows(t.solution.c.id == solution_id)
        return rows[0] if rows else None

    def delete(self, solution_id: int, staff: str) -> bool:
        """Mark a live solution deleted (kept for the record, never shown again); False if it was not live."""
        c = t.solution.c
        with self._writer.begin() as conn:
            done = conn.execute(t.solution.update().where(c.id == solution_id, c.status == "live")
                                .values(status="deleted", deleted_at=_now(), deleted_by=staff)).rowcount
        if done:
            with self._lock:
                if self._index is not None:
                    self._index.remove_ids(np.array([solution_id], dtype=np.int64))
        return bool(done)

    def _rows(self, *where: Any, order: Any = None, limit: int | None = None) -> list[Solution]:
        c = t.solution.c
        query = sa.select(*[col for col in t.solution.c if col.name not in ("embedding", "fingerprint", "embedder")])
        query = query.where(*where).order_by(order if order is not None else c.id)
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [Solution(**{k: v for k, v in r.items() if k != "args_json"},
                         args=json.loads(r["args_json"]) if r["args_json"] else None) for r in rows]


def build_memory(settings: Any, engine: sa.Engine, index: Any = None) -> SolutionMemory:
    """The memory of a deployment over ``engine``: the guide index's embedder when there is one (its
    model is loaded already), else the configured one (loaded on first use)."""
    from chops.retrieval.embedders import make_embedder

    embedder = getattr(index, "embedder", None) or make_embedder(settings)
    return SolutionMemory(engine, embedder, k=settings.memory_k, floor=settings.memory_floor)
