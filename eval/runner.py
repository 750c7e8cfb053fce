"""The batch runner: every (case, trial) once, results appended to ``results.jsonl`` as they finish,
so an interrupted run resumes where it stopped.

Run directory layout::

    run.json        the experiment's identity (config, dataset, models, prices); a resume must match
    results.jsonl   one JSON record per finished (case, trial)
    work/           template.db (the pristine database) and per-case scratch copies
    report.md, summary.json, *.png   written by ``eval.report`` at the end
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from eval.casework import AgentFactory, CaseContext, EvalAbort, default_agent_factory, run_case
from eval.config import EvalConfig
from eval.dataset import Case, load_cases
from eval.isolation import Loader, Template

RESULTS, RUN_META = "results.jsonl", "run.json"


class RunMismatch(ValueError):
    """The output directory holds a different experiment (code ``eval_run_mismatch``)."""

    code = "eval_run_mismatch"


class ResultLog:
    """``results.jsonl``: thread-safe appends (flushed and fsynced per record) and tolerant reads."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()

    def read(self) -> list[dict]:
        """Every complete record; a line cut off by an interruption is ignored (it is re-run)."""
        if not self.path.is_file():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and "key" in rec:
                out.append(rec)
        return out

    def repair(self) -> list[dict]:
        """Read, and drop a torn last line (an interrupted write) so the next append starts clean."""
        records = self.read()
        if self.path.is_file():
            text = self.path.read_text(encoding="utf-8")
            if (text and not text.endswith("\n")) or len(text.splitlines()) != len(records):
                self.rewrite(records)
        return records

    def rewrite(self, records: list[dict]) -> None:
        """Replace the file with ``records`` (atomic rename)."""
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r, default=str) + "\n" for r in records), encoding="utf-8")
        os.replace(tmp, self.path)

    def append(self, record: dict) -> None:
        """Append one record durably."""
        line = json.dumps(record, default=str) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


def role_meta(settings: Any, role: str) -> dict:
    """How ``role`` was served in a run, as ``run.json`` records it: provider, model, prices."""
    rs = settings.roles.get(role)
    return {"provider": rs.provider, "model": rs.model, "prices": list(rs.prices()), "tiers": list(rs.tiers)}


def _meta(cfg: EvalConfig, settings: Any, dataset_dir: Path, qa_dir: Path) -> dict:
    from chops.settings import ROLES

    roles = {r: role_meta(settings, r) for r in ROLES}
    return {"identity": cfg.identity(), "architecture": settings.architecture, "dataset": str(dataset_dir),
            "qa": str(qa_dir), "roles": roles, "max_iterations": settings.max_iterations,
            "verify_start": settings.verify_start, "verify_end": settings.verify_end}


def prepare_run_dir(out_dir: Path, meta: dict) -> dict:
    """Create ``out_dir`` or check that it holds the same experiment; returns the stored meta."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / RUN_META
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("identity") != meta["identity"] or old.get("architecture") != meta["architecture"]:
            raise RunMismatch(f"{out_dir} holds a run with a different configuration; "
                              f"use another --out (stored: {old.get('identity')}, {old.get('architecture')})")
        old.setdefault("resumed", 0)
        old["resumed"] += 1
        meta = {**meta, "created": old.get("created"), "resumed": old["resumed"]}
    else:
        meta = {**meta, "created": time.strftime("%Y-%m-%dT%H:%M:%S"), "resumed": 0}
    path.write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return meta


def pending_work(cases: list[Case], trials: int, done: set[str]) -> list[tuple[Case, int]]:
    """The (case, trial) pairs without a record yet, trial-major (all cases once, then again)."""
    return [(c, t) for t in range(1, trials + 1) for c in cases if f"{c.case_id}#{t}" not in done]


def run_eval(cfg: EvalConfig, dataset_dir: Path, out_dir: Path, *, qa_dir: Path | None = None,
             base_settings: Any = None, llm: Any = None, index: Any = None,
             agent_factory: AgentFactory = default_agent_factory, loader: Loader | None = None,
             retry_errors: bool = False, progress: bool = True,
             on_record: Callable[[dict], None] | None = None) -> list[dict]:
    """Run (or resume) the evaluation described by ``cfg`` into ``out_dir``; returns all records.

    ``llm``/``index``/``agent_factory``/``loader`` are injectable for tests; by default the models
    come from ``build_llm(settings)`` and the guides index from ``DIR/guides``.
    """
    from chops.settings import get_settings

    dataset_dir, out_dir = Path(dataset_dir), Path(out_dir)
    qa_dir = Path(qa_dir) if qa_dir else dataset_dir / "qa"
    settings = cfg.apply(base_settings or get_settings())
    settings = settings.model_copy(update={"cphos_dir": dataset_dir, "guides_dir": dataset_dir / "guides"})
    cases = select_cases(cfg, qa_dir)
    prepare_run_dir(out_dir, _meta(cfg, settings, dataset_dir, qa_dir))

    log = ResultLog(out_dir / RESULTS)
    records = log.repair()
    if retry_errors and any(r.get("error") for r in records):
        records = [r for r in records if not r.get("error")]
        log.rewrite(records)
    todo = pending_work(cases, cfg.trials, {r["key"] for r in records})
    if not todo:
        return records

    template = Template.build(dataset_dir, out_dir / "work", loader)
    own_llm = llm is None
    if own_llm:
        from chops.llm import build_llm

        llm = build_llm(settings)
    if index is None:
        from chops.retrieval import GuideIndex

        index = GuideIndex.load_or_build(dataset_dir / "guides", settings)
    memory = run_memory(out_dir / "work", settings, index, cfg.memory_seed) if settings.memory_enabled else None
    ctx = CaseContext(settings=settings, llm=llm, template=template, index=index, memory=memory,
                      scratch_dir=out_dir / "work" / "scratch", agent_factory=agent_factory, judge=cfg.judge)
    # With the memory on the cases are a stream: each one may learn from those before it, in order.
    workers = 1 if memory is not None else cfg.workers
    try:
        records += _execute(todo, ctx, workers, log, progress, len(cases) * cfg.trials, on_record)
    finally:
        if own_llm and hasattr(llm, "close"):
            llm.close()
    return records


def select_cases(cfg: EvalConfig, qa_dir: Path) -> list[Case]:
    """The rows of ``qa_dir`` a run of ``cfg`` takes (its ``only``, ``limit``, ``dedupe`` and ``per_group``), in
    its order; ``python -m bench.ask --dataset`` picks its rows the same way."""
    return ordered(load_cases(qa_dir, only=cfg.only, limit=cfg.limit, dedupe=cfg.dedupe, per_group=cfg.per_group),
                   cfg.shuffle_seed)


def ordered(cases: list[Case], seed: int | None) -> list[Case]:
    """``cases`` in file order, or shuffled by ``seed`` (the same seed, the same order)."""
    if seed is None:
        return cases
    import random

    shuffled = list(cases)
    random.Random(seed).shuffle(shuffled)
    return shuffled


def run_memory(work_dir: Path, settings: Any, index: Any, seed: Path | None = None) -> Any:
    """The run's solution memory, ``work/memory.db``: outside the per-case database copies, so it fills
    as the cases run and a resumed run goes on with it. Empty for a new run, or a copy of ``seed``."""
    import sqlite3

    from chops import tables as t
    from chops.db import make_engine
    from chops.memory import build_memory

    work_dir.mkdir(parents=True, exist_ok=True)
    path = work_dir / "memory.db"
    if seed is not None and not path.exists():
        # SQLite's backup, not a file copy: a seed still in use keeps recent rows in its -wal file.
        src, dst = sqlite3.connect(seed), sqlite3.connect(path)
        try:
            src.backup(dst)
        finally:
            src.close()
            dst.close()
    engine = make_engine(f"sqlite:///{path}")
    t.solution.create(engine, checkfirst=True)
    return build_memory(settings, engine, index)


def _execute(todo: list[tuple[Case, int]], ctx: CaseContext, workers: int, log: ResultLog,
             progress: bool, total: int, on_record: Callable[[dict], None] | None) -> list[dict]:
    from tqdm import tqdm

    done: list[dict] = []
    bar = tqdm(total=total, initial=total - len(todo), disable=not progress, unit="case", dynamic_ncols=True)

    def finish(rec: dict) -> None:
        log.append(rec)
        done.append(rec)
        if on_record:
            on_record(rec)
        bar.update(1)
        bar.set_postfix(passed=f"{sum(r['passed'] for r in done)}/{len(done)}", last=rec["key"])

    try:
        for rec in results_as_done(todo, lambda case, trial: run_case(case, trial, ctx), workers, "eval"):
            finish(rec)
        return done
    except (EvalAbort, KeyboardInterrupt):
        bar.write(f"stopped after {len(done)} new case(s); rerun the same command to resume")
        raise
    finally:
        bar.close()


def results_as_done(todo: list[tuple[Any, int]], run_one: Callable[[Any, int], dict], workers: int,
                    name: str) -> Iterator[dict]:
    """``run_one(item, trial)`` for every pair of ``todo`` on up to ``workers`` threads, each result yielded
    as soon as it is done (so the caller saves it at once). An exception (``EvalAbort``) propagates and
    what has not started is cancelled."""
    if workers <= 1:
        for item, trial in todo:
            yield run_one(item, trial)
        return
    queue = iter(todo)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
    try:
        running = {pool.submit(run_one, i, t) for i, t in _take(queue, workers)}
        while running:
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                yield fut.result()
                running |= {pool.submit(run_one, i, t) for i, t in _take(queue, 1)}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _take(it, n: int) -> list:
    out = []
    for _ in range(n):
        try:
            out.append(next(it))
        except StopIteration:
            break
    return out
