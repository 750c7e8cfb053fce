"""The conversation eval's report from ``results.jsonl``: ``summary.json``, ``report.md`` (Markdown tables) and
``report.png`` (pass rate and time per task).

pass^k is tau2's estimator: per task with n trials of which c passed, C(c, k) / C(n, k) (the chance that k
trials drawn from its n all pass), averaged over the tasks; pass_1 is then the mean success rate.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter, defaultdict
from math import comb
from pathlib import Path
from typing import Any

from eval.conversations.session import OK_OUTCOMES


def pass_hat(records: list[dict], k: int) -> float | None:
    """tau2's pass^k over the tasks with at least k trials (None when none has)."""
    by_task: dict[str, list[bool]] = defaultdict(list)
    for rec in records:
        by_task[rec["task_id"]].append(bool(rec.get("passed")))
    scores = [comb(sum(runs), k) / comb(len(runs), k) for runs in by_task.values() if len(runs) >= k]
    return round(sum(scores) / len(scores), 4) if scores else None


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 4)


def per_task(records: list[dict]) -> dict[str, dict[str, Any]]:
    """Per task: trials, passes, mean reward, DB and communicate pass rates, turns, time, cost, errors."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for rec in records:
        groups[rec["task_id"]].append(rec)
    out = {}
    for task_id, recs in groups.items():
        grades = [r.get("grade") or {} for r in recs]
        out[task_id] = {
            "trials": len(recs), "passes": sum(bool(r.get("passed")) for r in recs),
            "reward": _mean([r.get("reward") or 0.0 for r in recs]),
            "db_ok": _mean([float(bool(g.get("db_ok"))) for g in grades]),
            "communicate_ok": _mean([float(bool(g.get("communicate_ok"))) for g in grades]),
            "turns": _mean([r.get("n_turns") or 0 for r in recs]),
            "time_s": _mean([r.get("time_s") or 0 for r in recs]),
            "cost_usd": _mean([r.get("cost_usd") or 0.0 for r in recs]),
            "errors": sum(bool(r.get("error")) for r in recs),
            "ended": dict(Counter(str(r.get("ended")) for r in recs)),
        }
    return out


def per_operation(records: list[dict]) -> dict[str, dict[str, int]]:
    """Per operation: calls that reached the system, refused ones, ones with arguments no reference call of
    that operation had (``wrong_args``), and calls of an operation the reference never calls."""
    ops: dict[str, Counter] = defaultdict(Counter)
    for rec in records:
        for call in rec.get("calls") or []:
            c = ops[call["operation"]]
            c["called"] += 1
            c["refused"] += call.get("outcome") not in OK_OUTCOMES
            c["wrong_args"] += bool(call.get("wrong_args"))
            c["not_in_reference"] += call.get("in_reference") is False
    keys = ("called", "refused", "wrong_args", "not_in_reference")
    return {op: {k: c[k] for k in keys} for op, c in sorted(ops.items())}


def unconfirmed(records: list[dict]) -> list[dict[str, Any]]:
    """Committed write turns that changed something and whose trace does not say the customer confirmed them (must
    be none). A verified no-op ("your address already is …") commits no change and asks nothing; a record without
    ``changed`` (written before it was kept) counts as a change."""
    return [{"key": rec["key"], "turn": i, "operations": t.get("operations")}
            for rec in records for i, t in enumerate(rec.get("turns") or [])
            if t.get("committed") and t.get("changed", True) and not t.get("confirmed")]


def summarize(records: list[dict], trials: int) -> dict[str, Any]:
    """``summary.json``'s content."""
    turns = [t for r in records for t in r.get("turns") or []]
    turn_latency = [t.get("latency_s") or 0.0 for t in turns]
    bad = unconfirmed(records)
    return {
        "tasks": len({r["task_id"] for r in records}), "trials": trials, "conversations": len(records),
        "pass_1": pass_hat(records, 1), "pass_k": pass_hat(records, trials),
        "pass_hat": {str(k): pass_hat(records, k) for k in range(1, trials + 1)},
        "reward_mean": _mean([r.get("reward") or 0.0 for r in records]),
        "db_ok": _mean([float(bool((r.get("grade") or {}).get("db_ok"))) for r in records]),
        "communicate_ok": _mean([float(bool((r.get("grade") or {}).get("communicate_ok"))) for r in records]),
        "errors": sum(bool(r.get("error")) for r in records),
        "ended": dict(Counter(str(r.get("ended")) for r in records)),
        "unconfirmed_writes": len(bad), "unconfirmed": bad,
        "committed_writes": sum(bool(t.get("committed")) for t in turns),
        "per_task": per_task(records), "per_operation": per_operation(records),
        "steps": {"total": sum(t.get("steps") or 0 for t in turns),
                  "per_turn": _mean([t.get("steps") or 0 for t in turns]),
                  "per_conversation": _mean([r.get("steps") or 0 for r in records])},
        "model_calls": {"total": sum(r.get("model_calls") or 0 for r in records),
                        "per_turn": _mean([t.get("model_calls") or 0 for t in turns]),
                        "user_model_calls": sum(r.get("user_calls") or 0 for r in records),
                        "user_model_tokens": sum((r.get("user_tokens_in") or 0) + (r.get("user_tokens_out") or 0)
                                                 for r in records)},
        "cost": {"total_usd": round(sum(r.get("cost_usd") or 0.0 for r in records), 6),
                 "per_conversation_usd": _mean([r.get("cost_usd") or 0.0 for r in records]),
                 "per_turn_usd": _mean([t.get("cost_usd") or 0.0 for t in turns])},
        "latency": {"turn_mean_s": _mean(turn_latency), "turn_p50_s": _pct(turn_latency, 0.5),
                    "turn_p95_s": _pct(turn_latency, 0.95),
                    "conversation_mean_s": _mean([r.get("time_s") or 0.0 for r in records])},
        "turns": {"total": len(turns), "per_conversation": _mean([r.get("n_turns") or 0 for r in records])},
    }


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.4g}" if isinstance(value, float) else str(value).replace("|", "\\|")


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows])


def markdown(summary: dict[str, Any], records: list[dict]) -> str:
    """``report.md``: the headline, then per task, per operation and the failures to read."""
    s = summary
    head = _table(["metric", "value"], [
        ["conversations (tasks × trials)", f"{s['conversations']} ({s['tasks']} × {s['trials']})"],
        ["pass^1", s["pass_1"]], *([[f"pass^{s['trials']}", s["pass_k"]]] if s["trials"] > 1 else []),
        ["DB end state right", s["db_ok"]],
        ["communicate_info said", s["communicate_ok"]], ["unconfirmed writes (must be 0)", s["unconfirmed_writes"]],
        ["committed writes", s["committed_writes"]], ["crashed / errors", s["errors"]],
        ["how conversations ended", ", ".join(f"{k} {v}" for k, v in sorted(s["ended"].items()))],
        ["turns per conversation", s["turns"]["per_conversation"]], ["steps per turn", s["steps"]["per_turn"]],
        ["model calls per turn", s["model_calls"]["per_turn"]], ["cost total (USD)", s["cost"]["total_usd"]],
        ["turn latency mean / p95 (s)", f"{s['latency']['turn_mean_s']} / {s['latency']['turn_p95_s']}"]])
    tasks = _table(["task", "passes", "reward", "DB ok", "communicate ok", "turns", "time (s)", "errors", "ended"],
                   [[tid, f"{t['passes']}/{t['trials']}", t["reward"], t["db_ok"], t["communicate_ok"], t["turns"],
                     t["time_s"], t["errors"], ", ".join(f"{k} {v}" for k, v in t["ended"].items())]
                    for tid, t in s["per_task"].items()])
    ops = _table(["operation", "called", "refused", "wrong arguments", "not in reference"],
                 [[op, c["called"], c["refused"], c["wrong_args"], c["not_in_reference"]]
                  for op, c in s["per_operation"].items()])
    parts = ["# Conversation eval", head, "## Per task", tasks, "## Per operation", ops, "## Failures"]
    for rec in records:
        if rec.get("passed"):
            continue
        g = rec.get("grade") or {}
        lines = [f"### {rec['key']} (ended: {rec.get('ended')}, turns: {rec.get('n_turns')})"]
        if rec.get("error"):
            lines.append(f"- error: `{rec['error'].strip().splitlines()[-1]}`")
        if g.get("missing_info"):
            lines.append(f"- not said: {', '.join(g['missing_info'])}")
        for d in g.get("diff") or []:
            lines.append(f"- `{d['path']}`: expected `{d['expected']}`, got `{d['actual']}`")
        if g.get("differences", 0) > len(g.get("diff") or []):
            lines.append(f"- … {g['differences']} differences in all")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def plot(summary: dict[str, Any], path: Path) -> None:
    """``report.png``: pass rate and mean time per task, side by side."""
    import matplotlib

    matplotlib.use("Agg")  # no display; safe in worker threads and CI
    import matplotlib.pyplot as plt

    ids = list(summary["per_task"])
    rates = [t["passes"] / t["trials"] for t in summary["per_task"].values()]
    times = [t["time_s"] or 0.0 for t in summary["per_task"].values()]
    fig, (a, b) = plt.subplots(2, 1, figsize=(max(6, 0.25 * len(ids) + 2), 6), sharex=True)
    a.bar(range(len(ids)), rates, color="tab:green")
    a.set_ylabel("pass rate")
    a.set_ylim(0, 1.05)
    a.set_title(f"pass^1 {summary['pass_1']}, pass^{summary['trials']} {summary['pass_k']}")
    b.bar(range(len(ids)), times, color="tab:blue")
    b.set_ylabel("time per conversation (s)")
    b.set_xticks(range(len(ids)), ids, rotation=90, fontsize=7)
    b.set_xlabel("task")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def natural_key(task_id: str) -> tuple:
    """Task ids in the order a person expects: "2" before "10", words alphabetically."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", str(task_id)))


def write_report(out_dir: Path, records: list[dict], trials: int) -> dict[str, Any]:
    """Write ``summary.json``, ``report.md`` and ``report.png`` into ``out_dir``; returns the summary."""
    out_dir = Path(out_dir)
    records = sorted(records, key=lambda r: (r["trial"], natural_key(r["task_id"])))
    summary = summarize(records, trials)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    (out_dir / "report.md").write_text(markdown(summary, records), encoding="utf-8")
    if records:
        plot(summary, out_dir / "report.png")
    return summary
