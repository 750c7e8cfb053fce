"""Benchmark: how long `chops db load-cphos` takes on MariaDB and SQLite (median of a few runs).

    python -m bench.db_load [--runs 5] [--mariadb-url mysql+pymysql://root@127.0.0.1:3306] [--cphos-dir DIR]

Each run replaces every cmf_tp_* row in one transaction (the same code as the CLI), into a scratch
MariaDB database (created and dropped here) and a scratch SQLite file. "read" is parsing the JSON,
"load" is reading + deleting + inserting.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

from apis.cphos.db import init_schema
from apis.cphos.loaders import read_cphos, replace_cphos_rows
from bench.scratch import scratch_mariadb
from chops.db import make_engine


def _time_runs(engine: sa.Engine, directory: Path, runs: int) -> tuple[list[float], list[float]]:
    init_schema(engine)
    reads, loads = [], []
    for _ in range(runs):
        start = time.perf_counter()
        rows = read_cphos(directory)
        reads.append(time.perf_counter() - start)
        replace_cphos_rows(engine, rows)
        loads.append(time.perf_counter() - start)
    return reads, loads


def _line(name: str, reads: list[float], loads: list[float], n_rows: int) -> str:
    med = statistics.median(loads)
    return (f"{name:<8} load median {med:6.2f} s  (min {min(loads):.2f}, max {max(loads):.2f}; "
            f"JSON read {statistics.median(reads):.2f} s; {n_rows / med:,.0f} rows/s; {len(loads)} runs)")


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print one line per database."""
    from chops.settings import get_settings

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--mariadb-url", default="mysql+pymysql://root@127.0.0.1:3306")
    p.add_argument("--cphos-dir", type=Path, default=None)
    a = p.parse_args(argv)
    directory = (a.cphos_dir or get_settings().cphos_dir) / "database"
    n_rows = sum(len(v) for v in read_cphos(directory).values())
    print(f"CPHOS dump: {n_rows} rows in 9 tables from {directory}")

    with scratch_mariadb(a.mariadb_url) as engine:
        print(_line("MariaDB", *_time_runs(engine, directory, a.runs), n_rows))

    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'bench.db'}")
        print(_line("SQLite", *_time_runs(engine, directory, a.runs), n_rows))
        engine.dispose()


if __name__ == "__main__":
    main()
