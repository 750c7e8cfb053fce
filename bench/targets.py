"""Benchmark: the target check (chops.pipeline.targets) over the CPHOS system requests.

    python -m bench.targets [--runs 20] [--cphos-dir DIR] [--mariadb-url mysql+pymysql://root@127.0.0.1:3306]

Loads the CPHOS tables (900 members) into a scratch SQLite file (and a scratch MariaDB database when
--mariadb-url is given; created and dropped here), then runs the check on every write request of
``qa/system.csv`` with its gold arguments grounded as the executor grounds them. None of those
requests is about another person, so every refusal is a false positive; it prints them, the
candidate names per request and the median time of one check.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

from apis.cphos.db import init_schema
from apis.cphos.loaders import load_cphos
from apis.cphos.registry import OPERATIONS
from apis.cphos.service import Api
from bench.scratch import scratch_mariadb
from chops.db import make_engine
from chops.pipeline.context import TurnContext
from chops.pipeline.grounding import ground_args
from chops.pipeline.targets import name_candidates, others_named, request_texts
from chops.pipeline.trace import Trace
from chops.settings import get_settings


def _cases(api: Api, directory: Path) -> list[tuple[TurnContext, dict]]:
    cases = []
    with (directory / "qa" / "system.csv").open(encoding="utf-8") as fp:
        for row in csv.DictReader(fp):
            op = OPERATIONS.get(row["gold_api"])
            profile = api.profile(row["nickname"])
            if op is None or not op.writes or profile is None:
                continue
            ctx = TurnContext(nickname=row["nickname"], text=row["question_or_request"], profile=profile,
                              history=[], trace=Trace())
            cases.append((ctx, ground_args(json.loads(row["gold_args"] or "{}"), ctx.user_texts)[0]))
    return cases


def run(engine: sa.Engine, directory: Path, runs: int, name: str) -> None:
    """Load CPHOS into ``engine``, check every write request ``runs`` times, print one summary."""
    init_schema(engine)
    load_cphos(engine, directory / "database")
    api = Api(engine)
    cases = _cases(api, directory)
    refused = [(ctx.text, found) for ctx, args in cases if (found := others_named(api, ctx, args))]
    sizes = [len(set().union(*map(name_candidates, request_texts(ctx, args)))) for ctx, args in cases]
    times = []
    for _ in range(runs):
        for ctx, args in cases:
            start = time.perf_counter()
            others_named(api, ctx, args)
            times.append(time.perf_counter() - start)
    print(f"{name:<8} {len(cases)} write requests, {len(refused)} refused (false positives); "
          f"candidates per request median {statistics.median(sizes)}, max {max(sizes)}; "
          f"one check median {statistics.median(times) * 1000:.2f} ms, max {max(times) * 1000:.2f} ms "
          f"({len(times)} checks)")
    for text, found in refused:
        print(f"  refused: {text!r} -> {found}")


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cphos-dir", type=Path, default=None)
    parser.add_argument("--mariadb-url", default=None)
    a = parser.parse_args()
    a.cphos_dir = a.cphos_dir or get_settings().cphos_dir
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{tmp}/bench.db")
        run(engine, a.cphos_dir, a.runs, "sqlite")
        engine.dispose()
    if a.mariadb_url:
        with scratch_mariadb(a.mariadb_url) as engine:
            run(engine, a.cphos_dir, a.runs, "mariadb")


if __name__ == "__main__":
    main()
