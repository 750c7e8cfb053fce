"""End-to-end benchmark of ``Agent.handle`` with the configured models (default: the embedded local
model), warm (prompt heads cached first, as the service does at start-up): p50/p90 latency per route,
time to the first streamed token of model-written answers, generated tokens per role, characters
in/out, iterations, whether route, operation and outcome came out as expected, and per role (the
small-talk gate, the classifier's two levels, executor, verifier, chooser…) the prompt tokens the model
read and how many of them the engine served from its prompt cache, median per turn and in total; then,
with ``--concurrency``, turns per minute and latency with that many conversations at once.

    python -m bench.ask [--dataset DIR [--per-group N] [--limit N]] [--repeats N] [--only ROUTE]
                        [--architecture ARCH] [--concurrency 1,4,8] [--turns-each N] [--json]
                        [--show-replies] [--vs-executor-tiers local-0.5b,local-1.5b] [--vs-no-router]
                        [--vs-previous] [--vs-settings KEY=VALUE[,KEY=VALUE]]

The requests are our own, written for the demo data set (``apis/cphos/demo.py``) and the demo guides
(``bench/ask_cases.py``), or with ``--dataset DIR`` the CPHOS-dataset's QA rows, picked as
``chops eval --dataset DIR --per-group N --limit N`` picks them and each asked by the member the row
names, on the dataset's own database and guides; the expected route, operation and outcome are the
row's annotations. Every request runs on a fresh copy of its database, so a committed write never
changes the next request's starting point.

The ``--vs-…`` options time other settings side by side in the same run: every case runs under the
configured settings and under each other one (the order alternating per repeat, so drift of the
machine hits both alike), each setting on an engine of its own; the table gets one block per setting and the
median of the per-case latency ratios. ``--vs-executor-tiers``: the executor on those tiers.
``--vs-no-router``: the embedding router off (every route decided by the model classifier, the way
before the router). ``--vs-previous``: the settings before issue 23's second step (``bench/previous.py``;
keys this branch's settings lack are skipped and named), with a guide index of its own when its chunk
sizes differ. ``--vs-settings verifier_reason=first``: any settings changed. An engine of its own per
setting keeps their prompt caches apart (on a shared one, the later run of a pair found the request's own
tokens cached by the earlier one). Use ``--repeats 1`` for
latencies: a second repeat finds its own earlier prompts cached. The paper's C-E-V with gpt-3.5 spent 30.1k input characters
per request; the target is a quarter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.ask_cases import (
    AskCase,
    CaseSource,
    case_ok,
    dataset_source,
    demo_source,
    only_route,
)
from bench.ask_summary import (
    PAPER_CHARS_IN,
    paired_ratio,
    pct,
    print_summary,
    role_tokens,
    summarize,
)


@dataclass
class Setup:
    """One setting the cases run under: its name in the table, settings, models and guide index."""

    name: str
    settings: Any
    llm: Any
    index: Any


def _one(setup: Setup, source: CaseSource, tmp: Path, tag: str, case: AskCase) -> dict:
    """Run one case on a fresh copy of the source's database; the row of figures."""
    from apis.cphos.pack import pack
    from apis.cphos.service import Api
    from chops.bootstrap import build_agent
    from chops.db import make_engine
    from chops.llm import LLMError
    from chops.pipeline import TurnResult
    from chops.store import ConversationStore

    first: list[float] = []
    with source.fresh_copy(tmp / "scratch") as url:
        engine = make_engine(url)
        api = Api(engine)
        agent = build_agent(setup.settings, pack, api, setup.llm, setup.index, engine=engine,
                            approvals=ConversationStore(engine, api=api))
        t0 = time.perf_counter()

        def on_event(name: str, _payload: dict) -> None:
            if name == "delta" and not first:  # the first piece of a streamed answer
                first.append(time.perf_counter() - t0)

        try:
            res = agent.handle(case.nickname, case.text, turn_key=f"bench-{tag}:1", on_event=on_event)
        except LLMError as exc:  # a failed turn is a row of the table, not the end of the bench
            res = TurnResult(reply=str(exc), error=exc.code, trace={"totals": {"calls": 0}, "by_role": {}, "steps": []})
        finally:
            wall = time.perf_counter() - t0
            engine.dispose()  # before the copy is deleted
    steps = res.trace["steps"]
    row = {"case_id": case.case_id, "nickname": case.nickname, "request": case.text, "expected_route": case.route,
           "route": res.route, "expected_operation": case.operation, "operation": res.operation,
           "expected_outcome": case.outcome, "outcome": res.outcome, "args": res.args, "committed": res.committed,
           "queued": res.queued, "iterations": res.iterations, "chars_in": res.chars_in, "chars_out": res.chars_out,
           "calls": res.trace["totals"]["calls"], "latency_s": round(wall, 2),
           "first_token_s": round(first[0], 2) if first else None, "error": res.error, "reply": res.reply,
           "tier": res.trace.get("tier"),
           "routed": any(s["role"] == "router" and s.get("sure") for s in steps),
           "by_role": {role: {"calls": v["calls"], "chars_in": v["chars_in"], "latency_s": round(v["latency_s"], 2),
                              "prompt_tokens": v["prompt_tokens"], "completion_tokens": v["completion_tokens"]}
                       for role, v in res.trace["by_role"].items()},
           "roles": role_tokens(steps),
           "scores": [s.get("score") for s in steps if s["role"] == "verifier"]}
    return {**row, **case_ok(case, route=res.route, operation=res.operation, outcome=res.outcome)}


def concurrent(setup: Setup, source: CaseSource, tmp: Path, cases: list[AskCase], conversations: int,
               turns_each: int) -> dict:
    """``conversations`` users at once, each sending ``turns_each`` requests back to back."""
    from concurrent.futures import ThreadPoolExecutor

    def user(u: int) -> list[float]:
        return [_one(setup, source, tmp, f"c{conversations}-{u}-{t}", cases[(u + t) % len(cases)])["latency_s"]
                for t in range(turns_each)]

    t0 = time.perf_counter()
    with ThreadPoolExecutor(conversations) as pool:
        latencies = [x for xs in pool.map(user, range(conversations)) for x in xs]
    wall = time.perf_counter() - t0
    return {"conversations": conversations, "turns": len(latencies), "wall_s": round(wall, 1),
            "turns_per_min": round(len(latencies) / wall * 60, 1), "p50_s": pct(latencies, 50),
            "p90_s": pct(latencies, 90)}


def _overrides(text: str) -> dict[str, str]:
    """``"a=1,b=x"`` as ``{"a": "1", "b": "x"}`` (pydantic converts the values when the settings are built)."""
    pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
    if any(len(p) != 2 for p in pairs):
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE[,KEY=VALUE], got {text!r}")
    return {k.strip(): v.strip() for k, v in pairs}


def variants(args: argparse.Namespace, settings: Any) -> list[tuple[str, Any]]:
    """The other settings the ``--vs-…`` options ask for, each as (name, settings)."""
    from bench.previous import previous_settings

    out = []
    if args.vs_executor_tiers:
        tiers = args.vs_executor_tiers
        out.append(("executor " + ",".join(tiers), _with_executor_tiers(settings, tiers)))
    if args.vs_no_router:
        out.append(("no router", settings.model_copy(update={"router_enabled": False})))
    if args.vs_settings:
        from eval.config import EvalConfig

        out.append((" ".join(f"{k}={v}" for k, v in args.vs_settings.items()),
                    EvalConfig(settings=args.vs_settings).apply(settings)))
    if args.vs_previous:
        previous, skipped = previous_settings(settings)
        if skipped:
            print(f"previous way: skipped {', '.join(skipped)} (not settings on this branch)", flush=True)
        out.append(("previous", previous))
    return out


def build_setups(configured: Setup, others: list[tuple[str, Any]], guides_dir: Path, tmp: Path) -> list[Setup]:
    """The configured setup and one per other setting: its own models, on an engine of its own (the 1.5B
    model file linked under another path: one engine per path, so each keeps its own prompt cache and
    never finds what the other setting sent; the weights' pages are shared) and, when it cuts the guides
    otherwise, its own index, built in a data directory of its own (the library keeps one chunking per
    folder and would rebuild the configured one in place)."""
    from bench.previous import needs_own_index
    from chops.llm import build_llm
    from chops.retrieval import GuideIndex

    setups = [configured]
    for i, (name, s) in enumerate(others):
        model = s.model_path
        if model.is_file():
            link = tmp / f"engine-{i}" / model.name
            link.parent.mkdir(parents=True)
            link.symlink_to(model.resolve())
            s = s.model_copy(update={"local_model_path": link})
        llm = build_llm(s)
        llm.load()
        index = configured.index
        if needs_own_index(configured.settings, s):
            index = GuideIndex.load_or_build(guides_dir, s.model_copy(update={"data_dir": tmp / f"index-{i}"}))
        setups.append(Setup(name, s, llm, index))
    return setups


def run(args: argparse.Namespace) -> dict:
    """Run every case ``args.repeats`` times (warm) under every setup, then the concurrency levels."""
    from apis.cphos.pack import pack
    from apis.cphos.service import Api
    from chops.llm import build_llm
    from chops.pipeline import Agent
    from chops.retrieval import GuideIndex
    from chops.settings import get_settings

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        source = dataset_source(args.dataset, tmp / "work", per_group=args.per_group, limit=args.limit) \
            if args.dataset else demo_source(tmp / "work", args.guides)
        overrides = {"architecture": args.architecture} if args.architecture else {}
        settings = source.settings_for(get_settings(**overrides))
        guides_dir = source.guides_dir or settings.guides_dir
        llm = build_llm(settings)
        llm.load()  # load the weights before timing anything
        setups = build_setups(Setup("configured", settings, llm, GuideIndex.load_or_build(guides_dir, settings)),
                              variants(args, settings), guides_dir, tmp)
        cases = only_route(source.cases, args.only)
        for s in setups:  # as the service does before it is ready (the heads of the pack's own prompts)
            Agent(Api(None), s.llm, s.settings, s.index, approvals=None, prompts=pack.prompts).warm()
        rows, levels = [], []
        for rep in range(args.repeats):
            for i, case in enumerate(cases):
                for setup in setups[::-1] if rep % 2 else setups:
                    rows.append({**_one(setup, source, tmp, f"{rep}-{i}-{len(rows)}", case), "setup": setup.name})
                    _print_row(rows[-1], args.show_replies)
        for level in args.concurrency:
            levels.append(concurrent(setups[0], source, tmp, cases, level, args.turns_each))
            print(f"concurrency {levels[-1]}", flush=True)
    names = [s.name for s in setups]
    return {"load_average": os.getloadavg(), "cpus": os.cpu_count(), "threads": settings.local_threads,
            "dataset": str(args.dataset) if args.dataset else None,
            "settings": {"architecture": settings.architecture, "max_iterations": settings.max_iterations,
                         "models": {r: settings.roles.get(r).model for r in ("classifier", "executor", "verifier")}},
            "rows": rows, "concurrency": levels,
            "summary": summarize([r for r in rows if r["setup"] == names[0]]),
            "compared": {name: summarize([r for r in rows if r["setup"] == name]) for name in names[1:]},
            "ratio_p50": {name: paired_ratio(rows, [names[0], name]) for name in names[1:]}}


def _with_executor_tiers(settings, tiers: list[str]):
    """``settings`` with the executor's tiers set to ``tiers`` (the other roles unchanged), applied and
    validated as an eval config's role overrides are."""
    from eval.config import EvalConfig

    return EvalConfig(roles={"executor": {"tiers": tiers}}).apply(settings)


def _print_row(row: dict, show_reply: bool) -> None:
    ok = "ok " if row["route_ok"] and row["operation_ok"] and row["outcome_ok"] else "BAD"
    cached = sum(v["cached_tokens"] for v in row["roles"].values())
    read = sum(v["prompt_tokens"] for v in row["roles"].values())
    print(f"{ok} {row['latency_s']:7.1f}s it={row['iterations']} in={row['chars_in']:6d} out={row['chars_out']:4d} "
          f"tok={read}/{cached} cached {row['route']}/{row['operation']}/{row['outcome']} {row['args'] or ''} "
          f"scores={row['scores']} tier={row['tier']} [{row.get('setup', '')}] "
          f"<- {row['case_id'] + ' ' if row['case_id'] else ''}{row['nickname']}: {row['request']}", flush=True)
    if show_reply:
        roles = ", ".join(f"{k} {v['calls']}x {v['latency_s']}s/{v['prompt_tokens']}tok ({v['cached_tokens']} cached)"
                          for k, v in row["roles"].items())
        print(f"      {roles}\n      reply: {row['reply']}", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=None,
                        help="the CPHOS-dataset folder: its QA rows, database and guides instead of the demo's")
    parser.add_argument("--per-group", type=int, default=None, help="with --dataset: the first N rows of each intent")
    parser.add_argument("--limit", type=int, default=None, help="with --dataset: the first N rows of each QA file")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--only", choices=["basic_info", "guide", "system", "not_in_system"], default=None)
    parser.add_argument("--architecture", choices=["executor_only", "ce_1level", "cev_1level", "cev_2level"])
    parser.add_argument("--guides", type=Path, default=None, help="the demo requests' guides (default: configured)")
    parser.add_argument("--json", action="store_true", help="print the rows and summary as JSON")
    parser.add_argument("--show-replies", action="store_true")
    parser.add_argument("--concurrency", type=lambda v: [int(x) for x in v.split(",") if x], default=[],
                        help="comma-separated numbers of simultaneous conversations, e.g. 1,4,8")
    parser.add_argument("--turns-each", type=int, default=3, help="requests per conversation at each level")
    parser.add_argument("--vs-executor-tiers", type=lambda v: [x.strip() for x in v.split(",") if x.strip()],
                        default=None, help="also run every case with the executor on these tiers, side by side")
    parser.add_argument("--vs-no-router", action="store_true",
                        help="also run every case with the embedding router off (the model decides every route)")
    parser.add_argument("--vs-previous", action="store_true",
                        help="also run every case the previous way (bench/previous.py), side by side")
    parser.add_argument("--vs-settings", type=_overrides, default=None, metavar="KEY=VALUE[,KEY=VALUE]",
                        help="also run every case with these settings changed (validated as an eval config's "
                             "settings), side by side; e.g. verifier_reason=first")
    args = parser.parse_args(argv)
    if (args.per_group or args.limit) and not args.dataset:
        parser.error("--per-group and --limit pick dataset rows: give --dataset DIR")
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
        return 0
    print(f"\narchitecture {result['settings']['architecture']}, models {result['settings']['models']}"
          + (f", dataset {result['dataset']}" if result["dataset"] else ", demo requests"))
    for name, summary in [("configured", result["summary"]), *result["compared"].items()]:
        if result["compared"]:
            print(f"\n-- {name}")
        print_summary(summary)
    for name, ratio in result["ratio_p50"].items():
        print(f"median paired latency ratio ({name} / configured): {ratio}")
    o = result["summary"]["overall"]
    for level in result["concurrency"]:
        print(f"{level['conversations']} conversations at once: {level['turns']} turns in {level['wall_s']} s = "
              f"{level['turns_per_min']} turns/min, p50 {level['p50_s']} s, p90 {level['p90_s']} s")
    print(f"machine: {result['cpus']} CPUs, {result['threads']} engine threads, load average at the end "
          f"{tuple(round(x, 1) for x in result['load_average'])}")
    print(f"mean chars in per request {o['mean_chars_in']} (paper C-E-V gpt-3.5: {PAPER_CHARS_IN}; "
          f"target a quarter: {PAPER_CHARS_IN // 4}); mean iterations {o['mean_iterations']}; "
          f"router decided {o['router_decided']}/{o['n']}; errors {o['errors']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
