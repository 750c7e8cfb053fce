"""``report.md``, ``summary.json`` and the PNG plots of a run (and of an ablation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.metrics import operations

SUMMARY, REPORT = "summary.json", "report.md"
FIG_COST, FIG_ITER = "accuracy_vs_cost.png", "iterations.png"


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.3f}".rstrip("0").rstrip(".") if abs(v) >= 0.001 or v == 0 else f"{v:.2e}"
    return str(v)


def md_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-markdown table."""
    cell = lambda v: _fmt(v).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(out)


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def plot_accuracy_vs_cost(points: list[dict], path: Path) -> Path:
    """Figure 5 style: Acc_sys and Acc_file (%) against relative cost, one label per architecture."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for key, marker, label in (("acc_sys", "o", "Acc_sys"), ("acc_file", "s", "Acc_file")):
        xs = [p.get("relative_cost") or 0 for p in points if p.get(key) is not None]
        ys = [100 * p[key] for p in points if p.get(key) is not None]
        names = [p.get("architecture") for p in points if p.get(key) is not None]
        ax.scatter(xs, ys, marker=marker, label=label)
        for x, y, name in zip(xs, ys, names):
            ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    xmax = max([p.get("relative_cost") or 0 for p in points] + [1.0])
    ax.set_xlim(0, xmax * 1.25)
    ax.set_xlabel("relative cost (vs executor-only)")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_iterations(hist: dict, path: Path) -> Path:
    """Bar chart: how many requests ended after 1, 2, ... iterations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    keys = sorted(int(k) for k in hist)
    ax.bar([str(k) for k in keys], [hist[k] if k in hist else hist[str(k)] for k in keys])
    ax.set_xlabel("iterations used")
    ax.set_ylabel("requests")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def summary_markdown(s: dict) -> str:
    """The headline table of one run."""
    rows = [["Acc_sys (%)", _pct(s["acc_sys"]), f"n={s['n_sys']}"],
            ["Acc_file (%, judge)", _pct(s["acc_file"]), f"n={s['n_file']}"],
            ["accuracy, all (%)", _pct(s["acc_all"]), f"n={s['requests']}"],
            ["reference similarity (token F1, guide rows)", s["similarity_mean"], ""],
            ["operation = gold_api (system rows)", _pct(s["operation_accuracy"]), ""],
            ["LLM calls / request", s["calls_per_request"], ""],
            ["chars in / request", s["chars_in_per_request"], ""],
            ["chars out / request", s["chars_out_per_request"], ""],
            ["cost / request (USD)", s["cost_per_request_usd"], s["price_basis"]],
            ["relative cost", s["relative_cost"], s["baseline"]],
            ["latency median (s)", s["latency_median_s"], f"mean {_fmt(s['latency_mean_s'])}"],
            ["iterations mean / median", f"{_fmt(s['iterations_mean'])} / {_fmt(s['iterations_median'])}", ""],
            ["errors (crashed cases)", s["errors"], json.dumps(s["error_codes"])]]
    return md_table(["metric", "value", "note"], rows)


def _failures(records: list[dict], limit: int = 60) -> str:
    if all(r.get("passed") for r in records):
        return "None."
    rows = []
    for r in [r for r in records if not r.get("passed")][:limit]:
        g = r.get("grade") or {}
        why = r.get("error", "").strip().splitlines()[-1] if r.get("error") else "; ".join(g.get("reasons") or [])
        rows.append([r["key"], r["category"], r["text"][:70], r.get("route"), " + ".join(map(str, operations(r))),
                     r.get("outcome"), why[:160], (r.get("reply") or "")[:100]])
    return md_table(["case", "category", "question", "route", "operation", "outcome", "why", "reply"], rows)


def render(s: dict, meta: dict, records: list[dict]) -> str:
    """The whole ``report.md`` text of one run."""
    it = s["iteration_table"]
    cats = s["confusion"]["per_category"]
    routes = sorted({rt for row in s["confusion"]["matrix"].values() for rt in row})
    models = ", ".join(f"{r}={v.get('provider')}:{v.get('model')}" for r, v in (meta.get("roles") or {}).items())
    parts = [
        f"# Evaluation: {s['architecture']}",
        f"Dataset `{meta.get('dataset')}`, QA `{meta.get('qa')}`. Models: {models}.",
        summary_markdown(s),
        f"![accuracy vs relative cost]({FIG_COST})  ![iterations]({FIG_ITER})",
        "## Per role (averages per request)",
        md_table(["role", "calls", "chars in", "chars out"],
                 [[role, v["calls"], v["chars_in"], v["chars_out"]] for role, v in s["by_role"].items()]),
        "## Per category",
        md_table(["category", "n", "accuracy (%)", "route accuracy (%)"],
                 [[c, v["n"], _pct(v["accuracy"]), _pct(v["route_accuracy"])] for c, v in cats.items()]),
        "## Route confusion (row category × classifier route)",
        md_table(["category", *routes], [[c, *[row.get(rt, 0) for rt in routes]]
                                          for c, row in s["confusion"]["matrix"].items()]),
        "## Iterations (the paper's Table 6)",
        md_table(["iteration", "reached", "verifier pass", "verifier fail", "pass → graded correct",
                  "pass → graded wrong", "fail → next pass", "fail → next fail", "mean score"],
                 [[r["iteration"], r["reached"], r["verifier_pass"], r["verifier_fail"], r["pass_graded_correct"],
                   r["pass_graded_wrong"], r["fail_then_pass"], r["fail_then_fail"], r["mean_score"]]
                  for r in it["rows"] if r["reached"]] or [["–"] * 9]),
        f"Chooser used after the last failure: {it['chooser_used']} (graded correct: "
        f"{it['chooser_graded_correct']}); writes queued for staff approval: {it['queued']}.",
        "## pass^k",
        md_table(["k", "pass^k"], [[k, v] for k, v in s["pass_hat_k"].items()]),
        "## Failed cases", _failures(records),
    ]
    return "\n\n".join(parts) + "\n"


def write_report(out_dir: Path, records: list[dict], meta: dict, summary: dict,
                 points: list[dict] | None = None) -> Path:
    """Write ``summary.json``, ``report.md`` and the two PNGs into ``out_dir``; returns report.md.

    ``points``: other runs' summaries to plot with this one (e.g. from an ablation)."""
    out_dir = Path(out_dir)
    (out_dir / SUMMARY).write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    plot_accuracy_vs_cost([summary, *(points or [])], out_dir / FIG_COST)
    plot_iterations(summary["iteration_table"]["iterations_hist"], out_dir / FIG_ITER)
    path = out_dir / REPORT
    path.write_text(render(summary, meta, records), encoding="utf-8")
    return path


def ablation_markdown(summaries: list[dict]) -> str:
    """The paper's Table 2: architectures side by side."""
    headers = ["architecture", "Acc_sys (%)", "Acc_file (%)", "relative cost", "calls/request",
               "chars in/request", "chars out/request", "latency median (s)", "iterations mean"]
    rows = [[s["architecture"], _pct(s["acc_sys"]), _pct(s["acc_file"]), s["relative_cost"],
             s["calls_per_request"], s["chars_in_per_request"], s["chars_out_per_request"],
             s["latency_median_s"], s["iterations_mean"]] for s in summaries]
    return md_table(headers, rows)
