"""The paper's metrics computed from ``results.jsonl`` records (§5 and the appendix of arXiv 2404.01343).

Costs: every role's calls are priced with the configured (input, output) USD per 1M tokens; tokens
are the provider's counts when reported, else ``ceil(chars/4)``. When every configured price is 0
(the embedded local models), the run is priced at gpt-3.5-turbo's list price (1.5 / 2.0), the 0.5B's
tokens at the share of it its size gives (``LOCAL_SCALE``), so that relative costs stay comparable;
``price_basis`` in the summary says which was used.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict

from chops.llm.accounting import estimate_tokens
from chops.settings import MODEL_05B_NAME
from eval.dataset import EXPECTED_ROUTE

FALLBACK_PRICES = (1.5, 2.0)  # gpt-3.5-turbo, the paper's Table 5
ROLE_ORDER = ("classifier", "executor", "verifier", "chooser")


def _mean(xs: list[float]) -> float | None:
    return round(statistics.fmean(xs), 4) if xs else None


def operations(record: dict) -> list:
    """The operations a record's turn ran, in order (records from before plans hold only ``operation``)."""
    return record.get("operations") or [record.get("operation")]


def _acc(recs: list[dict]) -> float | None:
    return round(sum(bool(r.get("passed")) for r in recs) / len(recs), 4) if recs else None


# Under the fallback price a local model's tokens cost in proportion to its parameters (a dense transformer
# spends ~2 FLOPs per parameter per token): the 1.5B at gpt-3.5's list price, the 0.5B at 494M/1,544M of it.
LOCAL_SCALE = {MODEL_05B_NAME: 494 / 1544}


class FallbackPrices(defaultdict):
    """Every role at gpt-3.5's list price, each local model's tokens scaled by ``LOCAL_SCALE``."""

    def __init__(self) -> None:
        super().__init__(lambda: FALLBACK_PRICES)


def role_prices(meta: dict) -> tuple[dict[str, tuple[float, float]], str]:
    """Per-role prices from run meta, with the fallback rule of this module's docstring."""
    prices = {r: tuple(v.get("prices") or (0.0, 0.0)) for r, v in (meta.get("roles") or {}).items()}
    if not prices or all(p == (0.0, 0.0) for p in prices.values()):
        return FallbackPrices(), "gpt-3.5-turbo list price scaled by local model size (configured prices are 0)"
    return defaultdict(lambda: (0.0, 0.0), prices), "configured prices"


def _tokens(tot: dict) -> tuple[int, int]:
    return (tot.get("prompt_tokens") or estimate_tokens(tot.get("chars_in", 0)),
            tot.get("completion_tokens") or estimate_tokens(tot.get("chars_out", 0)))


def priced_cost(rec: dict, prices: dict[str, tuple[float, float]], roles: tuple[str, ...] | None = None) -> float:
    """USD of one request's agent calls (the judge excluded) at ``prices``.

    A record that keeps its calls per model (a role with tiers calls several) is priced per model: under
    the fallback by ``LOCAL_SCALE``, with configured prices by what each call cost at its tier's price."""
    total = 0.0
    by_model = rec.get("calls_by_model") or {role: {None: tot}
                                              for role, tot in (rec.get("calls_by_role") or {}).items()}
    for role, models in by_model.items():
        if roles is not None and role not in roles:
            continue
        for model, tot in models.items():
            if model is not None and not isinstance(prices, FallbackPrices):
                total += tot.get("cost_usd") or 0.0
                continue
            tin, tout = _tokens(tot)
            pin, pout = prices[role]
            scale = LOCAL_SCALE.get(model, 1.0) if isinstance(prices, FallbackPrices) else 1.0
            total += scale * (tin * pin + tout * pout) / 1_000_000
    return total


def estimated_baseline(records: list[dict], prices: dict[str, tuple[float, float]]) -> float | None:
    """Executor-only cost per request estimated from this run: ONE average executor call per
    request, priced with the executor's prices (used when no measured executor_only run is given)."""
    per_call = []
    for r in records:
        ex = (r.get("calls_by_role") or {}).get("executor")
        if ex and ex.get("calls"):
            one = {"executor": {k: (ex.get(k) or 0) / ex["calls"] for k in
                                ("chars_in", "chars_out", "prompt_tokens", "completion_tokens")}}
            per_call.append(priced_cost({"calls_by_role": one}, prices))
    return statistics.fmean(per_call) if per_call else None


def iteration_table(records: list[dict], max_iter: int) -> dict:
    """Table 6: per iteration, how many requests reached it, passed / failed the verifier, and how
    the passes graded; transitions between iterations; the chooser after the last failure."""
    rows = []
    for i in range(1, max_iter + 1):
        at = [(r, r["verifier"][i - 1]) for r in records if len(r.get("verifier") or []) >= i]
        passed = [(r, v) for r, v in at if _verdict(v)]
        failed = [(r, v) for r, v in at if not _verdict(v)]
        nxt = [r for r, _ in failed if len(r.get("verifier") or []) > i]
        rows.append({"iteration": i, "reached": len(at), "verifier_pass": len(passed), "verifier_fail": len(failed),
                     "pass_graded_correct": sum(bool(r.get("passed")) for r, _ in passed),
                     "pass_graded_wrong": sum(not r.get("passed") for r, _ in passed),
                     "fail_then_pass": sum(_verdict(r["verifier"][i]) for r in nxt),
                     "fail_then_fail": sum(not _verdict(r["verifier"][i]) for r in nxt),
                     "mean_score": _mean([v["score"] for _, v in at if isinstance(v.get("score"), (int, float))])})
    chosen = [r for r in records if r.get("chooser_used")]
    return {"rows": rows, "chooser_used": len(chosen),
            "chooser_graded_correct": sum(bool(r.get("passed")) for r in chosen),
            "queued": sum(bool(r.get("queued")) for r in records),
            "iterations_hist": dict(sorted(Counter(int(r.get("iterations") or 0) for r in records).items()))}


def _verdict(v: dict) -> bool:
    if v.get("passed") is not None:
        return bool(v["passed"])
    score, thr = v.get("score"), v.get("threshold")
    return score is not None and thr is not None and score >= thr


def pass_hat_k(records: list[dict]) -> dict[int, float]:
    """pass^k (tau-bench): mean over cases of C(c, k) / C(n, k), c of n trials passed, k = 1..min n."""
    by_case: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        by_case[r["case_id"]].append(bool(r.get("passed")))
    if not by_case:
        return {}
    kmax = min(len(v) for v in by_case.values())
    return {k: round(statistics.fmean(math.comb(sum(v), k) / math.comb(len(v), k) for v in by_case.values()), 4)
            for k in range(1, kmax + 1)}


def confusion(records: list[dict]) -> dict:
    """Category × classifier route counts, and route / grade accuracy per category."""
    table: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        table[r["category"]][r.get("route") or ("error" if r.get("error") else "none")] += 1
    per_cat = {}
    for cat in sorted(table):
        recs = [r for r in records if r["category"] == cat]
        per_cat[cat] = {"n": len(recs), "accuracy": _acc(recs),
                        "route_accuracy": _acc([{"passed": r.get("route") == EXPECTED_ROUTE.get(cat)} for r in recs])}
    return {"matrix": {c: dict(v) for c, v in sorted(table.items())}, "per_category": per_cat}


def tier_shares(records: list[dict]) -> dict[str, float]:
    """EcoAssistant: the share of executor calls each tier (or model, without tiers) answered."""
    calls: Counter = Counter()
    for r in records:
        calls.update(r.get("executor_tiers") or {})
    total = sum(calls.values())
    return {tier: round(n / total, 4) for tier, n in calls.most_common()} if total else {}


def _wrong_write(r: dict) -> bool:
    if not r.get("committed"):
        return False
    checks = (r.get("grade") or {}).get("checks") or {}
    # A system case grades the database's effect on its own; any other case should have written nothing.
    return checks["effect"] is False if "effect" in checks else not r.get("passed")


def wrong_writes(records: list[dict]) -> int:
    """Requests that committed a change the database should not show: nobody asked for it, or to the wrong
    value (a right write with a wrong reply is not one). EcoAssistant's hierarchy must keep this at zero."""
    return sum(_wrong_write(r) for r in records)


def demonstration_counts(records: list[dict]) -> dict:
    """Demonstrations shown: in all, per request, how many requests saw any; solutions remembered."""
    shown = [int(r.get("demonstrations") or 0) for r in records]
    return {"total": sum(shown), "per_request": _mean(shown), "requests_with": sum(n > 0 for n in shown),
            "remembered": sum(r.get("remembered") is not None for r in records)}


def summarize(records: list[dict], meta: dict, *, baseline_cost: float | None = None) -> dict:
    """Every metric of one run. ``baseline_cost`` = measured executor-only cost per request
    (from an ``executor_only`` run priced the same way); without it the baseline is estimated."""
    prices, basis = role_prices(meta)
    sys_r = [r for r in records if r.get("kind") == "system"]
    gui_r = [r for r in records if r.get("kind") == "guide"]
    n = len(records)
    roles = sorted({role for r in records for role in (r.get("calls_by_role") or {})},
                   key=lambda x: ROLE_ORDER.index(x) if x in ROLE_ORDER else 99)
    by_role = {role: {f: _mean([(r.get("calls_by_role") or {}).get(role, {}).get(f, 0) for r in records])
                      for f in ("calls", "chars_in", "chars_out")} for role in roles}
    costs = [priced_cost(r, prices) for r in records]
    cost = statistics.fmean(costs) if costs else 0.0
    baseline = baseline_cost if baseline_cost is not None else estimated_baseline(records, prices)
    lat = [r["turn_latency_s"] if r.get("turn_latency_s") is not None else r.get("latency_s", 0) for r in records]
    sims = [r["grade"]["similarity"] for r in gui_r if (r.get("grade") or {}).get("similarity") is not None]
    sys_ops = [r for r in sys_r if r.get("outcome") != "refused_missing_args"]
    return {
        "architecture": meta.get("architecture"), "requests": n, "cases": len({r["case_id"] for r in records}),
        "errors": sum(bool(r.get("error")) for r in records),
        "error_codes": dict(Counter(r.get("error_code") for r in records if r.get("error"))),
        "acc_sys": _acc(sys_r), "n_sys": len(sys_r), "acc_file": _acc(gui_r), "n_file": len(gui_r),
        "acc_all": _acc(records), "wrong_writes": wrong_writes(records),
        "similarity_mean": _mean(sims),
        "operation_accuracy": _acc([{"passed": operations(r) == [r.get("gold_api")]} for r in sys_ops]),
        "calls_per_request": _mean([(r.get("calls") or {}).get("calls", 0) for r in records]),
        "chars_in_per_request": _mean([(r.get("calls") or {}).get("chars_in", 0) for r in records]),
        "chars_out_per_request": _mean([(r.get("calls") or {}).get("chars_out", 0) for r in records]),
        "by_role": by_role,
        "cost_per_request_usd": round(cost, 8), "price_basis": basis,
        "baseline_cost_per_request_usd": None if baseline is None else round(baseline, 8),
        "baseline": "measured executor_only run" if baseline_cost is not None else "estimated: one executor call",
        "relative_cost": round(cost / baseline, 3) if baseline else None,
        "latency_median_s": round(statistics.median(lat), 3) if lat else None,
        "latency_mean_s": _mean(lat),
        "iterations_mean": _mean([r.get("iterations") or 0 for r in records]),
        "iterations_median": statistics.median([r.get("iterations") or 0 for r in records]) if records else None,
        "snapshot_median_s": statistics.median([r["snapshot_s"] for r in records if r.get("snapshot_s")] or [0]),
        "iteration_table": iteration_table(records, int(meta.get("max_iterations") or 5)),
        "pass_hat_k": pass_hat_k(records),
        "confusion": confusion(records),
        "tiers": tier_shares(records),
        "answered_by_tier": dict(Counter(r["tier"] for r in records if r.get("tier"))),
        "demonstrations": demonstration_counts(records),
    }
