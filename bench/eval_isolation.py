"""Benchmark of the evaluation's per-case isolation on the CPHOS dump: building the template
database once, copying it per case, and the after-turn snapshot + diff. Prints medians.

    python -m bench.eval_isolation [--dataset DIR] [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa


def main() -> None:
    """Run the benchmark and print the medians in milliseconds."""
    from apis.cphos.state import diff_snapshots, snapshot
    from chops.db import make_engine
    from chops.settings import get_settings
    from eval.isolation import Template

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", type=Path, default=get_settings().cphos_dir)
    ap.add_argument("--repeats", type=int, default=20)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        tpl = Template.build(a.dataset, Path(tmp) / "work")
        build = time.perf_counter() - t0
        t0 = time.perf_counter()
        Template.build(a.dataset, Path(tmp) / "work")
        reuse = time.perf_counter() - t0
        times: dict[str, list[float]] = {"copy": [], "snapshot": [], "diff": []}
        for i in range(a.repeats):
            t0 = time.perf_counter()
            with tpl.fresh_copy(Path(tmp) / "scratch") as url:
                times["copy"].append(time.perf_counter() - t0)
                engine = make_engine(url)
                with engine.begin() as conn:  # a typical write: one member field
                    conn.execute(sa.text("UPDATE cmf_tp_member SET subject = :s WHERE id = 706"), {"s": i % 10 + 1})
                t1 = time.perf_counter()
                after = snapshot(engine)
                t2 = time.perf_counter()
                diff_snapshots(tpl.before, after)
                t3 = time.perf_counter()
                engine.dispose()
            times["snapshot"].append(t2 - t1)
            times["diff"].append(t3 - t2)
    rows = sum(len(v) for v in tpl.before.values())
    print(f"template: {rows} rows in {len(tpl.before)} tables; build {build * 1000:.0f} ms, reuse {reuse * 1000:.0f} ms")
    for name, xs in times.items():
        print(f"{name:<9} median {statistics.median(xs) * 1000:7.1f} ms  (n={len(xs)})")


if __name__ == "__main__":
    main()
