"""EcoAssistant's evaluation (arXiv 2310.03046, Table 3) beside the paper's Table 2: model configurations
run as streams in which the solution memory fills as the cases go, over one or more shuffled orders.

``chops eval ablate --configurations 1.5b,0.5b,0.5b+demos,hierarchy,hierarchy+demos [--orders 3]`` runs
each configuration (resumably) into ``OUT/<configuration>`` (``OUT/<configuration>/order-<seed>`` with
several orders) and writes ``OUT/ecoassistant.md`` / ``.json`` and ``OUT/stream.png``: success and cost
against the number of cases seen. Relative costs are against the 1.5B-only configuration when it ran.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from eval.compare import baseline_from, load_run
from eval.config import EvalConfig
from eval.metrics import priced_cost, role_prices, summarize
from eval.report import md_table, write_report
from eval.runner import run_eval

FIG_STREAM = "stream.png"
LOOP = ("classifier", "executor", "verifier", "chooser")
_SMALL, _LARGE = ["local-0.5b"], ["local-1.5b"]
# Per configuration: the tiers of each loop role and whether demonstrations are on. In the hierarchy only
# the executor starts at the 0.5B. The verifier and the chooser stay at the 1.5B: as the only verifier,
# the 0.5B passed writes nobody made. So does the classifier: alone it routed 43 of the 102 visible rows
# right (the 1.5B: 99), sending most requests to change something to the profile (`python -m
# bench.classify --only cphos` with CHOPS_ROLES__CLASSIFIER__TIERS=local-0.5b).
_HIERARCHY = {"classifier": _LARGE, "executor": _SMALL + _LARGE, "verifier": _LARGE, "chooser": _LARGE}
CONFIGURATIONS: dict[str, tuple[dict[str, list[str]], bool]] = {
    "1.5b": ({role: _LARGE for role in LOOP}, False),
    "0.5b": ({role: _SMALL for role in LOOP}, False),
    "0.5b+demos": ({role: _SMALL for role in LOOP}, True),
    "hierarchy": (_HIERARCHY, False),
    "hierarchy+demos": (_HIERARCHY, True),
}


def configured(cfg: EvalConfig, name: str, seed: int | None) -> EvalConfig:
    """``cfg`` with configuration ``name``'s tiers and memory switch, in the order of ``seed``."""
    tiers, demos = CONFIGURATIONS[name]
    roles = {role: dict(over) for role, over in cfg.roles.items()}
    for role, names in tiers.items():
        roles[role] = {**roles.get(role, {}), "tiers": names}
    return cfg.model_copy(update={"roles": roles, "settings": {**cfg.settings, "memory_enabled": demos},
                                  "shuffle_seed": seed})


def orders_of(name: str, seeds: list[int | None]) -> list[int | None]:
    """The orders configuration ``name`` runs in: every seed with demonstrations; without them each case
    is independent of the others (isolated database, empty memory), so the order cannot change a result
    and the first seed stands for all."""
    return seeds if CONFIGURATIONS[name][1] else seeds[:1]


def run_dirs(out_dir: Path, name: str, seeds: list[int | None]) -> list[Path]:
    """Where each order of configuration ``name`` runs (one directory per seed when several)."""
    return [out_dir / name] if len(seeds) == 1 else [out_dir / name / f"order-{s}" for s in seeds]


def run_configurations(cfg: EvalConfig, dataset_dir: Path, out_dir: Path, *, names: tuple[str, ...],
                       orders: int = 1, **run_kwargs: Any) -> list[dict]:
    """Run every configuration in ``names`` over ``orders`` orders (seeds 1..orders; one order: the
    config's own seed; see ``orders_of``); returns one summary per configuration, averaged over its orders."""
    out_dir = Path(out_dir)
    seeds: list[int | None] = list(range(1, orders + 1)) if orders > 1 else [cfg.shuffle_seed]
    for name in names:
        mine = orders_of(name, seeds)
        for seed, where in zip(mine, run_dirs(out_dir, name, mine)):
            if run_kwargs.get("progress", True):
                print(f"== {name} (order {seed}) ==", flush=True)
            run_eval(configured(cfg, name, seed), dataset_dir, where, **run_kwargs)
    baseline = baseline_from(run_dirs(out_dir, "1.5b", orders_of("1.5b", seeds))[0]) if "1.5b" in names else None
    summaries, streams = [], {}
    for name in names:
        per_order = []
        for where in run_dirs(out_dir, name, orders_of(name, seeds)):
            meta, records = load_run(where)
            s = summarize(records, meta, baseline_cost=baseline)
            write_report(where, records, meta, s)
            per_order.append(s)
            streams.setdefault(name, (meta, records))
        summaries.append(averaged(name, per_order))
    plot_stream(streams, out_dir / FIG_STREAM)
    (out_dir / "ecoassistant.json").write_text(json.dumps(summaries, indent=2, default=str), encoding="utf-8")
    (out_dir / "ecoassistant.md").write_text(
        f"# EcoAssistant configurations\n\nSame cases for every configuration; with demonstrations {len(seeds)} "
        f"shuffled order(s), without them one (the order cannot matter); relative cost against "
        f"{'the 1.5B-only run' if baseline else 'one executor call'}.\n\n{eco_markdown(summaries)}"
        f"\n\n![success and cost against cases seen]({FIG_STREAM})\n", encoding="utf-8")
    return summaries


_AVERAGED = ("acc_sys", "acc_file", "acc_all", "relative_cost", "cost_per_request_usd", "latency_median_s",
             "calls_per_request", "iterations_mean")


def averaged(name: str, summaries: list[dict]) -> dict:
    """One configuration's figures: the mean over its orders (and the spread of accuracy)."""
    out: dict[str, Any] = {"configuration": name, "architecture": name, "orders": len(summaries)}
    for key in _AVERAGED:
        values = [s[key] for s in summaries if s.get(key) is not None]
        out[key] = round(statistics.fmean(values), 4) if values else None
    accs = [s["acc_all"] for s in summaries if s.get("acc_all") is not None]
    out["acc_all_range"] = [min(accs), max(accs)] if accs else None
    out["wrong_writes"] = sum(s.get("wrong_writes") or 0 for s in summaries)  # over all orders
    tiers = {t for s in summaries for t in s.get("tiers", {})}
    out["tiers"] = {t: round(statistics.fmean(s.get("tiers", {}).get(t, 0.0) for s in summaries), 4) for t in tiers}
    out["demonstrations"] = {"per_request": statistics.fmean(s["demonstrations"]["per_request"] or 0
                                                             for s in summaries)}
    return out


def eco_markdown(summaries: list[dict]) -> str:
    """The configurations side by side (EcoAssistant's Table 3 with the paper's Table 2 columns)."""
    pct = lambda v: "–" if v is None else f"{100 * v:.1f}"  # noqa: E731
    rows = [[s["configuration"], pct(s["acc_sys"]), pct(s["acc_file"]), pct(s["acc_all"]),
             "–" if not s["acc_all_range"] else f"{pct(s['acc_all_range'][0])}–{pct(s['acc_all_range'][1])}",
             s["wrong_writes"], s["relative_cost"], s["latency_median_s"],
             ", ".join(f"{t} {pct(v)}" for t, v in sorted(s["tiers"].items())),
             round(s["demonstrations"]["per_request"], 2), s["orders"]] for s in summaries]
    return md_table(["configuration", "Acc_sys (%)", "Acc_file (%)", "accuracy (%)", "over orders", "wrong writes",
                     "relative cost",
                     "latency median (s)", "executor calls per tier (%)", "demonstrations / request", "orders"],
                    rows)


def curve(records: list[dict], meta: dict) -> tuple[list[float], list[float]]:
    """Running success rate and running mean priced cost per request, after each case of the stream."""
    prices, _ = role_prices(meta)
    success, cost, passed, spent = [], [], 0, 0.0
    for n, rec in enumerate(records, start=1):
        passed += bool(rec.get("passed"))
        spent += priced_cost(rec, prices)
        success.append(passed / n)
        cost.append(spent / n)
    return success, cost


def plot_stream(streams: dict[str, tuple[dict, list[dict]]], path: Path) -> Path:
    """Success (%) and mean cost per request against cases seen, one line per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 6), sharex=True)
    for name, (meta, records) in streams.items():
        success, cost = curve(records, meta)
        xs = range(1, len(records) + 1)
        top.plot(xs, [100 * v for v in success], label=name)
        bottom.plot(xs, cost, label=name)
    top.set_ylabel("success so far (%)")
    top.set_ylim(0, 105)
    bottom.set_ylabel("mean cost / request (USD)")
    bottom.set_xlabel("cases seen")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    top.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
