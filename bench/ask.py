"""End-to-end benchmark of ``Agent.handle`` on the demo data with the configured models (default:
the embedded local model), warm (prompt heads cached first, as the service does at start-up):
p50/p90 latency per route, time to the first streamed token of model-written answers, generated
tokens per role, characters in/out, iterations, whether route, operation and outcome came out as
expected; then, with ``--concurrency``, turns per minute and latency with that many conversations at once.

    python -m bench.ask [--repeats N] [--only ROUTE] [--architecture ARCH] [--concurrency 1,4,8]
                        [--turns-each N] [--json] [--show-replies] [--vs-executor-tiers local-0.5b,local-1.5b]
                        [--vs-no-router]

``--vs-executor-tiers`` times a second setting side by side in the same run: every case runs under
the configured executor and then under those tiers (the order alternating per repeat, so drift of
the machine hits both alike), both sharing the same engines; the table gets one block per setting
and the median of the per-case latency ratios. ``--vs-no-router`` does the same with the embedding router
turned off (every route decided by the model classifier, the way before the router).

The requests are our own, written for the demo data set (``apis/cphos/demo.py``) and the demo guides.
Every request runs on a fresh copy of the demo database, so a committed write never changes the
next request's starting point. The guide index comes from the data directory (built if needed).
The paper's C-E-V with gpt-3.5 spent 30.1k input characters per request; the target is a quarter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

PAPER_CHARS_IN = 30_100

# (nickname, request, expected route, expected operation, expected outcome) — our own requests.
CASES: list[tuple[str, str, str, str | None, str | None]] = [
    ("demo_busy_leader", "How many problems do I still have to mark?", "basic_info", None, None),
    ("demo_vice", "What is my role in the portal?", "basic_info", None, None),
    ("demo_pending", "Has my registration been approved yet?", "basic_info", None, None),
    ("demo_leader", "Can I upload answer sheets after the deadline?", "guide", None, None),
    ("demo_leader", "How do I add a student?", "guide", None, None),
    ("demo_vice", "Is there a fee for taking part?", "guide", None, None),
    ("demo_leader", "Please change my upload limit to 40.", "system", "ChangeAllTypesUploadLimit", "ok"),
    ("demo_busy_leader", "Change my marking subject to 4, please.", "system", "ChangeAllTypesMarkingSubject",
     "refused_precondition"),
    ("demo_leader", "I want to change my marking subject.", "system", "ChangeAllTypesMarkingSubject",
     "refused_missing_args"),
    ("demo_other_leader", "Make me a vice team leader of Lena Leader.", "system", "MakeAllTypesToBeSubCoach", "ok"),
    ("demo_admin", "Show me the users called Bruno Busy.", "system", "GetTeacherInfoByName", "ok"),
    ("demo_leader", "Please add a school called Bayview Prep in Lakeside.", "system", "AddNewSchoolByName",
     "refused_permission"),
]


def _one(llm, settings, index, tmp: Path, tag: str, case: tuple) -> dict:
    """Run one case on a fresh copy of the demo database; the row of figures."""
    from apis.cphos.db import init_schema
    from apis.cphos.loaders import seed_demo
    from apis.cphos.pack import pack
    from apis.cphos.service import Api
    from chops.db import make_engine
    from chops.llm import LLMError
    from chops.bootstrap import build_agent
    from chops.pipeline import TurnResult
    from chops.store import ConversationStore

    nick, text, route, op, outcome = case
    engine = make_engine(f"sqlite:///{tmp / f'bench-{tag}.db'}")
    init_schema(engine)
    seed_demo(engine)
    api = Api(engine)
    agent = build_agent(settings, pack, api, llm, index, engine=engine, approvals=ConversationStore(engine, api=api))
    first: list[float] = []
    t0 = time.perf_counter()

    def on_event(name: str, _payload: dict) -> None:
        if name == "delta" and not first:  # the first piece of a streamed answer
            first.append(time.perf_counter() - t0)

    try:
        res = agent.handle(nick, text, turn_key=f"bench-{tag}:1", on_event=on_event)
    except LLMError as exc:  # a failed turn is a row of the table, not the end of the bench
        res = TurnResult(reply=str(exc), error=exc.code, trace={"totals": {"calls": 0}, "by_role": {}, "steps": []})
    wall = time.perf_counter() - t0
    engine.dispose()
    row = {"nickname": nick, "request": text, "expected_route": route, "route": res.route,
           "expected_operation": op, "operation": res.operation, "expected_outcome": outcome,
           "outcome": res.outcome, "args": res.args, "committed": res.committed, "queued": res.queued,
           "iterations": res.iterations, "chars_in": res.chars_in, "chars_out": res.chars_out,
           "calls": res.trace["totals"]["calls"], "latency_s": round(wall, 2),
           "first_token_s": round(first[0], 2) if first else None, "error": res.error, "reply": res.reply,
           "tier": res.trace.get("tier"),
           "by_role": {role: {"calls": v["calls"], "chars_in": v["chars_in"], "latency_s": round(v["latency_s"], 2),
                              "prompt_tokens": v["prompt_tokens"], "completion_tokens": v["completion_tokens"]}
                       for role, v in res.trace["by_role"].items()},
           "scores": [s.get("score") for s in res.trace["steps"] if s["role"] == "verifier"]}
    row["route_ok"] = res.route == route
    row["operation_ok"] = res.operation == op
    row["outcome_ok"] = outcome is None or res.outcome == outcome
    return row


def concurrent(llm, settings, index, tmp: Path, cases: list, conversations: int, turns_each: int) -> dict:
    """``conversations`` users at once, each sending ``turns_each`` requests back to back."""
    from concurrent.futures import ThreadPoolExecutor

    def user(u: int) -> list[float]:
        return [_one(llm, settings, index, tmp, f"c{conversations}-{u}-{t}", cases[(u + t) % len(cases)])["latency_s"]
                for t in range(turns_each)]

    t0 = time.perf_counter()
    with ThreadPoolExecutor(conversations) as pool:
        latencies = [x for xs in pool.map(user, range(conversations)) for x in xs]
    wall = time.perf_counter() - t0
    return {"conversations": conversations, "turns": len(latencies), "wall_s": round(wall, 1),
            "turns_per_min": round(len(latencies) / wall * 60, 1), "p50_s": _pct(latencies, 50),
            "p90_s": _pct(latencies, 90)}


def run(args: argparse.Namespace) -> dict:
    """Run every case ``args.repeats`` times (warm), then the concurrency levels; rows and summary."""
    from chops.llm import build_llm
    from chops.retrieval import GuideIndex
    from chops.settings import get_settings

    settings = get_settings(**({"architecture": args.architecture} if args.architecture else {}))
    index = GuideIndex.load_or_build(args.guides or settings.guides_dir, settings)
    llm = build_llm(settings)
    llm.load()  # load the weights before timing anything
    cases = [c for c in CASES if args.only in (None, c[2])]
    setups = [("configured", settings, llm)]
    if args.vs_executor_tiers:
        tiered = _with_executor_tiers(settings, args.vs_executor_tiers)
        tiered_llm = build_llm(tiered)  # its engines are the shared ones: only a model not yet up loads
        tiered_llm.load()
        setups.append(("executor " + ",".join(args.vs_executor_tiers), tiered, tiered_llm))
    if args.vs_no_router:
        setups.append(("no router", settings.model_copy(update={"router_enabled": False}), llm))
    rows, levels = [], []
    with tempfile.TemporaryDirectory() as tmp:
        from apis.cphos.pack import pack
        from apis.cphos.service import Api
        from chops.pipeline import Agent

        for _, s, model in setups:  # as the service does before it is ready (the heads of the pack's own prompts)
            Agent(Api(None), model, s, index, approvals=None, prompts=pack.prompts).warm()
        for rep in range(args.repeats):
            for i, case in enumerate(cases):
                for name, s, model in setups[::-1] if rep % 2 else setups:
                    rows.append({**_one(model, s, index, Path(tmp), f"{rep}-{i}-{len(rows)}", case), "setup": name})
                    _print_row(rows[-1], args.show_replies)
        for level in args.concurrency:
            levels.append(concurrent(llm, settings, index, Path(tmp), cases, level, args.turns_each))
            print(f"concurrency {levels[-1]}", flush=True)
    return {"load_average": os.getloadavg(), "cpus": os.cpu_count(), "threads": settings.local_threads,
            "settings": {"architecture": settings.architecture, "max_iterations": settings.max_iterations,
                         "models": {r: settings.roles.get(r).model for r in ("classifier", "executor", "verifier")}},
            "rows": rows, "concurrency": levels,
            "summary": summarize([r for r in rows if r["setup"] == "configured"]),
            "compared": {name: summarize([r for r in rows if r["setup"] == name]) for name, *_ in setups[1:]},
            "ratio_p50": _paired_ratio(rows, [name for name, *_ in setups])}


def _with_executor_tiers(settings, tiers: list[str]):
    """``settings`` with the executor's tiers set to ``tiers`` (the other roles unchanged), applied and
    validated as an eval config's role overrides are."""
    from eval.config import EvalConfig

    return EvalConfig(roles={"executor": {"tiers": tiers}}).apply(settings)


def _paired_ratio(rows: list[dict], setups: list[str]) -> float | None:
    """Median over the runs of each case of (second setting's latency / first's), paired run by run."""
    if len(setups) < 2:
        return None
    firsts = [r for r in rows if r["setup"] == setups[0]]
    seconds = [r for r in rows if r["setup"] == setups[1]]
    return round(statistics.median(b["latency_s"] / a["latency_s"] for a, b in zip(firsts, seconds)), 3)


def _pct(values: list[float], q: int) -> float:
    """The q-th percentile (nearest rank) of ``values``; 0 for none."""
    xs = sorted(v for v in values if v is not None)
    return round(xs[min(len(xs) - 1, max(0, -(-q * len(xs) // 100) - 1))], 2) if xs else 0.0


def summarize(rows: list[dict]) -> dict:
    """Percentiles per route and overall, generated tokens per role, and the share handled as expected."""
    def med(key: str, rs: list[dict]) -> float:
        return round(statistics.median(r[key] for r in rs), 2) if rs else 0.0

    def gen(rs: list[dict]) -> dict:
        return {role: round(statistics.median(r["by_role"].get(role, {}).get("completion_tokens", 0) for r in rs), 1)
                for role in ("classifier", "executor", "verifier")}

    out: dict = {"by_route": {}}
    for route in ("basic_info", "guide", "system"):
        rs = [r for r in rows if r["expected_route"] == route]
        if rs:
            out["by_route"][route] = {
                "n": len(rs), "p50_latency_s": _pct([r["latency_s"] for r in rs], 50),
                "p90_latency_s": _pct([r["latency_s"] for r in rs], 90),
                "p50_first_token_s": _pct([r["first_token_s"] for r in rs], 50),
                "median_chars_in": med("chars_in", rs), "median_chars_out": med("chars_out", rs),
                "median_iterations": med("iterations", rs), "generated_tokens": gen(rs),
                "correct": sum(r["route_ok"] and r["operation_ok"] and r["outcome_ok"] for r in rs)}
    out["overall"] = {"n": len(rows), "p50_latency_s": _pct([r["latency_s"] for r in rows], 50),
                      "p90_latency_s": _pct([r["latency_s"] for r in rows], 90),
                      "median_chars_in": med("chars_in", rows), "mean_chars_in": round(statistics.mean(
                          r["chars_in"] for r in rows), 1) if rows else 0,
                      "median_chars_out": med("chars_out", rows), "median_iterations": med("iterations", rows),
                      "mean_iterations": round(statistics.mean(r["iterations"] for r in rows), 2) if rows else 0,
                      "generated_tokens": gen(rows),
                      "correct": sum(r["route_ok"] and r["operation_ok"] and r["outcome_ok"] for r in rows),
                      "errors": sum(r["error"] is not None for r in rows),
                      "paper_chars_in": PAPER_CHARS_IN}
    return out


def _print_row(row: dict, show_reply: bool) -> None:
    ok = "ok " if row["route_ok"] and row["operation_ok"] and row["outcome_ok"] else "BAD"
    print(f"{ok} {row['latency_s']:7.1f}s it={row['iterations']} in={row['chars_in']:6d} out={row['chars_out']:4d} "
          f"{row['route']}/{row['operation']}/{row['outcome']} {row['args'] or ''} scores={row['scores']} "
          f"tier={row['tier']} "
          f"<- {row['nickname']}: {row['request']}", flush=True)
    if show_reply:
        roles = ", ".join(f"{k} {v['calls']}x {v['latency_s']}s/{v['prompt_tokens']}tok" for k, v in row["by_role"].items())
        print(f"      {roles}\n      reply: {row['reply']}", flush=True)


def _print_summary(s: dict) -> None:
    print(f"{'route':<11} {'n':>3} {'p50 s':>6} {'p90 s':>6} {'1st tok s':>9} {'chars in':>9} {'chars out':>9} "
          f"{'iters':>6} {'gen tok cls/exe/ver':>20} {'correct':>8}")
    for route, r in [*s["by_route"].items(), ("all", s["overall"])]:
        g = r["generated_tokens"]
        print(f"{route:<11} {r['n']:>3} {r['p50_latency_s']:>6} {r['p90_latency_s']:>6} "
              f"{r.get('p50_first_token_s', '') or '':>9} {r['median_chars_in']:>9} {r['median_chars_out']:>9} "
              f"{r['median_iterations']:>6} {g['classifier']:>6}/{g['executor']}/{g['verifier']:<6} "
              f"{r['correct']:>5}/{r['n']}")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--only", choices=["basic_info", "guide", "system"], default=None)
    parser.add_argument("--architecture", choices=["executor_only", "ce_1level", "cev_1level", "cev_2level"])
    parser.add_argument("--guides", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="print the rows and summary as JSON")
    parser.add_argument("--show-replies", action="store_true")
    parser.add_argument("--concurrency", type=lambda v: [int(x) for x in v.split(",") if x], default=[],
                        help="comma-separated numbers of simultaneous conversations, e.g. 1,4,8")
    parser.add_argument("--turns-each", type=int, default=3, help="requests per conversation at each level")
    parser.add_argument("--vs-executor-tiers", type=lambda v: [x.strip() for x in v.split(",") if x.strip()],
                        default=None, help="also run every case with the executor on these tiers, side by side")
    parser.add_argument("--vs-no-router", action="store_true",
                        help="also run every case with the embedding router off (the model decides every route)")
    args = parser.parse_args(argv)
    result = run(args)
    s = result["summary"]
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
        return 0
    print(f"\narchitecture {result['settings']['architecture']}, models {result['settings']['models']}")
    for name, summary in [("configured", s), *result["compared"].items()]:
        if result["compared"]:
            print(f"-- {name}")
        _print_summary(summary)
    if result["ratio_p50"] is not None:
        print(f"median paired latency ratio (second / configured): {result['ratio_p50']}")
    o = s["overall"]
    for level in result["concurrency"]:
        print(f"{level['conversations']} conversations at once: {level['turns']} turns in {level['wall_s']} s = "
              f"{level['turns_per_min']} turns/min, p50 {level['p50_s']} s, p90 {level['p90_s']} s")
    print(f"machine: {result['cpus']} CPUs, {result['threads']} engine threads, load average at the end "
          f"{tuple(round(x, 1) for x in result['load_average'])}")
    print(f"mean chars in per request {o['mean_chars_in']} (paper C-E-V gpt-3.5: {PAPER_CHARS_IN}; "
          f"target a quarter: {PAPER_CHARS_IN // 4}); mean iterations {o['mean_iterations']}; errors {o['errors']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
