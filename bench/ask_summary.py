"""The figures ``python -m bench.ask`` prints from its rows: latency per route, time to the first token,
and where the prompt tokens go — per role, how many the model read and how many of them came from the
engine's prompt cache (the trace's model-call steps, which sum the ledger's records).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

PAPER_CHARS_IN = 30_100
ROUTES = ("basic_info", "guide", "system", "not_in_system")  # the order of the table; others follow
_LEVELS = {0: "small-talk gate", 1: "classifier L1", 2: "classifier L2"}
ALL_ROLES = "(all)"


def role_of(step: dict) -> str:
    """The role a model-call step counts under: the ledger's role, with the classifier's questions apart
    (its small-talk gate, level 1, level 2, and its reading of a yes/no to a described change)."""
    if step.get("role") != "classifier":
        return step.get("role") or "?"
    if step.get("route") == "confirm":
        return "confirmation"
    return _LEVELS.get(step.get("level"), "classifier")


def role_tokens(steps: Iterable[dict]) -> dict[str, dict]:
    """One turn's model calls per role (``role_of``): calls, prompt tokens read, of them served from the
    prompt cache, generated tokens and model seconds. Steps that are not model calls (the router,
    retrieval, the dry run) have no ``attempts`` and are left out."""
    out: dict[str, dict] = {}
    for step in steps:
        if "attempts" not in step:
            continue
        r = out.setdefault(role_of(step), {"calls": 0, "prompt_tokens": 0, "cached_tokens": 0,
                                           "completion_tokens": 0, "latency_s": 0.0})
        r["calls"] += step["attempts"]
        for key in ("prompt_tokens", "cached_tokens", "completion_tokens"):
            r[key] += step.get(key) or 0
        r["latency_s"] = round(r["latency_s"] + (step.get("latency_s") or 0.0), 4)
    return out


def summarize_roles(rows: list[dict]) -> dict[str, dict]:
    """Per role over ``rows`` (each with ``roles`` from ``role_tokens``): the turns it ran in, its calls, the
    median per turn (of those turns) of prompt tokens read, of them cached, and model seconds, and the
    totals; ``(all)`` is every role of a turn together, over every turn."""
    def figures(per_turn: list[dict]) -> dict:
        prompt = [p["prompt_tokens"] for p in per_turn]
        cached = [p["cached_tokens"] for p in per_turn]
        return {"turns": len(per_turn), "calls": sum(p["calls"] for p in per_turn),
                "p50_prompt_tokens": _median(prompt), "p50_cached_tokens": _median(cached),
                "total_prompt_tokens": sum(prompt), "total_cached_tokens": sum(cached),
                "cached_share": round(sum(cached) / sum(prompt), 3) if sum(prompt) else None,
                "p50_model_s": _median([p["latency_s"] for p in per_turn])}

    labels = dict.fromkeys(label for r in rows for label in r["roles"])
    out = {label: figures([r["roles"][label] for r in rows if label in r["roles"]]) for label in labels}
    if rows:
        out[ALL_ROLES] = figures([{k: sum(v[k] for v in r["roles"].values())
                                   for k in ("calls", "prompt_tokens", "cached_tokens", "latency_s")} for r in rows])
    return out


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else 0.0


def pct(values: list[float | None], q: int) -> float:
    """The q-th percentile (nearest rank) of ``values`` (None left out); 0 for none."""
    xs = sorted(v for v in values if v is not None)
    return round(xs[min(len(xs) - 1, max(0, -(-q * len(xs) // 100) - 1))], 2) if xs else 0.0


def paired_ratio(rows: list[dict], setups: list[str]) -> float | None:
    """Median over the runs of each case of (second setting's latency / first's), paired run by run."""
    if len(setups) < 2:
        return None
    firsts = [r for r in rows if r["setup"] == setups[0]]
    seconds = [r for r in rows if r["setup"] == setups[1]]
    return round(statistics.median(b["latency_s"] / a["latency_s"] for a, b in zip(firsts, seconds)), 3)


def summarize(rows: list[dict]) -> dict:
    """Percentiles per expected route and overall, generated tokens per role, prompt tokens per role
    (``summarize_roles``), and the share handled as expected."""
    def med(key: str, rs: list[dict]) -> float:
        return round(statistics.median(r[key] for r in rs), 2) if rs else 0.0

    def gen(rs: list[dict]) -> dict:
        return {role: round(statistics.median(r["by_role"].get(role, {}).get("completion_tokens", 0) for r in rs), 1)
                for role in ("classifier", "executor", "verifier")}

    def correct(rs: list[dict]) -> int:
        return sum(r["route_ok"] and r["operation_ok"] and r["outcome_ok"] for r in rs)

    out: dict = {"by_route": {}}
    for route in dict.fromkeys([*ROUTES, *(r["expected_route"] for r in rows)]):
        rs = [r for r in rows if r["expected_route"] == route]
        if rs:
            out["by_route"][route] = {
                "n": len(rs), "p50_latency_s": pct([r["latency_s"] for r in rs], 50),
                "p90_latency_s": pct([r["latency_s"] for r in rs], 90),
                "p50_first_token_s": pct([r["first_token_s"] for r in rs], 50),
                "median_chars_in": med("chars_in", rs), "median_chars_out": med("chars_out", rs),
                "median_iterations": med("iterations", rs), "generated_tokens": gen(rs), "correct": correct(rs)}
    out["overall"] = {"n": len(rows), "p50_latency_s": pct([r["latency_s"] for r in rows], 50),
                      "p90_latency_s": pct([r["latency_s"] for r in rows], 90),
                      "p50_first_token_s": pct([r["first_token_s"] for r in rows], 50),
                      "median_chars_in": med("chars_in", rows), "mean_chars_in": round(statistics.mean(
                          r["chars_in"] for r in rows), 1) if rows else 0,
                      "median_chars_out": med("chars_out", rows), "median_iterations": med("iterations", rows),
                      "mean_iterations": round(statistics.mean(r["iterations"] for r in rows), 2) if rows else 0,
                      "generated_tokens": gen(rows), "correct": correct(rows),
                      "router_decided": sum(bool(r.get("routed")) for r in rows),
                      "errors": sum(r["error"] is not None for r in rows), "paper_chars_in": PAPER_CHARS_IN}
    out["roles"] = summarize_roles(rows)
    return out


def print_summary(s: dict) -> None:
    """The route table, then the prompt-token table per role."""
    print(f"{'route':<13} {'n':>3} {'p50 s':>6} {'p90 s':>6} {'1st tok s':>9} {'chars in':>9} {'chars out':>9} "
          f"{'iters':>6} {'gen tok cls/exe/ver':>20} {'correct':>8}")
    for route, r in [*s["by_route"].items(), ("all", s["overall"])]:
        g = r["generated_tokens"]
        print(f"{route:<13} {r['n']:>3} {r['p50_latency_s']:>6} {r['p90_latency_s']:>6} "
              f"{r.get('p50_first_token_s', '') or '':>9} {r['median_chars_in']:>9} {r['median_chars_out']:>9} "
              f"{r['median_iterations']:>6} {g['classifier']:>6}/{g['executor']}/{g['verifier']:<6} "
              f"{r['correct']:>5}/{r['n']}")
    print(f"\n{'role':<16} {'turns':>5} {'calls':>5} {'prompt p50':>10} {'cached p50':>10} {'prompt sum':>10} "
          f"{'cached sum':>10} {'cached %':>8} {'model s p50':>11}")
    for role, r in s["roles"].items():
        share = "" if r["cached_share"] is None else f"{100 * r['cached_share']:.0f}"
        print(f"{role:<16} {r['turns']:>5} {r['calls']:>5} {r['p50_prompt_tokens']:>10} {r['p50_cached_tokens']:>10} "
              f"{r['total_prompt_tokens']:>10} {r['total_cached_tokens']:>10} {share:>8} {r['p50_model_s']:>11}")
