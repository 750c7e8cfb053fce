"""Loading finished runs, writing their report, and comparing two runs."""

from __future__ import annotations

import json
from pathlib import Path

from eval.metrics import priced_cost, role_prices, summarize
from eval.report import SUMMARY, write_report
from eval.runner import RESULTS, RUN_META, ResultLog

HEADLINE = ("acc_sys", "acc_file", "acc_all", "similarity_mean", "operation_accuracy", "relative_cost",
            "calls_per_request", "chars_in_per_request", "chars_out_per_request", "cost_per_request_usd",
            "latency_median_s", "iterations_mean", "errors")


class NotARun(FileNotFoundError):
    """A directory without ``run.json``/``results.jsonl`` (code ``eval_not_a_run``)."""

    code = "eval_not_a_run"


def load_run(run_dir: Path) -> tuple[dict, list[dict]]:
    """(meta, records) of the run in ``run_dir``."""
    run_dir = Path(run_dir)
    if not (run_dir / RUN_META).is_file():
        raise NotARun(f"{run_dir} is not an evaluation run (no {RUN_META})")
    meta = json.loads((run_dir / RUN_META).read_text(encoding="utf-8"))
    return meta, ResultLog(run_dir / RESULTS).read()


def baseline_from(run_dir: Path) -> float | None:
    """Mean priced cost per request of an (executor-only) run, for relative costs of other runs."""
    meta, records = load_run(run_dir)
    prices, _ = role_prices(meta)
    costs = [priced_cost(r, prices) for r in records]
    return sum(costs) / len(costs) if costs else None


def finalize_run(run_dir: Path, *, baseline_cost: float | None = None, points: list[dict] | None = None) -> dict:
    """Summarise the run in ``run_dir`` and write its report; returns the summary."""
    meta, records = load_run(run_dir)
    summary = summarize(records, meta, baseline_cost=baseline_cost)
    write_report(Path(run_dir), records, meta, summary, points=points)
    return summary


def _summary(run_dir: Path) -> tuple[dict, list[dict]]:
    meta, records = load_run(run_dir)
    path = Path(run_dir) / SUMMARY
    summary = json.loads(path.read_text()) if path.is_file() else summarize(records, meta)
    return summary, records


def compare_runs(run_a: Path, run_b: Path) -> str:
    """A plain-text comparison: headline metrics (A, B, B−A) and the cases whose grade flipped."""
    sa, ra = _summary(run_a)
    sb, rb = _summary(run_b)
    lines = [f"A = {run_a} ({sa.get('architecture')}), B = {run_b} ({sb.get('architecture')})",
             f"{'metric':<24}{'A':>14}{'B':>14}{'B-A':>14}"]
    for key in HEADLINE:
        a, b = sa.get(key), sb.get(key)
        delta = b - a if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None
        lines.append(f"{key:<24}{_s(a):>14}{_s(b):>14}{_s(delta):>14}")
    pa = {r["key"]: r for r in ra}
    pb = {r["key"]: r for r in rb}
    common = sorted(set(pa) & set(pb))
    fixed = [k for k in common if pb[k].get("passed") and not pa[k].get("passed")]
    broke = [k for k in common if pa[k].get("passed") and not pb[k].get("passed")]
    lines.append(f"cases in both: {len(common)}; only in A: {len(set(pa) - set(pb))}; "
                 f"only in B: {len(set(pb) - set(pa))}")
    lines.append(f"failed in A, passed in B ({len(fixed)}): {', '.join(fixed) or '-'}")
    lines.append(f"passed in A, failed in B ({len(broke)}): {', '.join(broke) or '-'}")
    return "\n".join(lines)


def _s(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)
