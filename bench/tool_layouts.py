"""Tool retrieval on the local model: what each prompt layout costs and what the executor picks.

    python -m bench.tool_layouts [--variants all,cached@3,inline@3] [--cphos N] [--per-group G] [--retail N] [--json]

The executor's first step on the operations route (one model call) for requests of both packs, in variants:
all        today's prompt: every operation in the cached system part, every operation in the grammar
cached@K   the same prompt; the grammar allows only the short list of ``tool_top_k`` K (``tool_layout=cached``)
inline@K   the short list in the user part, none in the system part (``tool_layout=inline``)

Requests: the first ``N`` CPHOS system rows, ``G`` of each intent (``group_id``; right = the row's annotated
``gold_api``), and the first ``N`` tau2-retail train openings (right = the task's first reference
action other than the sign-in checks: the look-up the shop's rules ask for first). Each layout's static
head is cached first, as a warm service has it; the variants run one after another, each over all requests,
and a marker per variant starts every user part, so no variant reads another's request from the cache:
"read" is what a new message costs, prompt tokens minus those found in the cache.
Threads: ``CHOPS_LOCAL_THREADS``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from bench.tools import SIGN_IN, operations
from chops.domain.operations import operation_lines
from chops.domain.pack import load_pack
from chops.llm import LLMError, build_llm
from chops.pipeline.context import Candidate, TurnContext
from chops.pipeline.executor import Executor
from chops.pipeline.prompting import pack_prompts, system_part
from chops.pipeline.retrieval import Retriever
from chops.pipeline.tools import ToolRanker
from chops.pipeline.trace import Trace
from chops.retrieval.embedders import make_embedder
from chops.settings import get_settings
from eval.dataset import first_per_group, read_system

VARIANTS = "all,cached@3,inline@3"


class FirstStep(Executor):
    """The executor up to its first plan: the plan is kept, never run (no database needed)."""

    def run_plan(self, ctx, calls, step, lookups=None) -> Candidate:
        ctx.trace.info["calls"] = [name for name, _ in calls]
        return Candidate(iteration=1, route="system")


class Marked:
    """The LLM with a marker before each user part: the engine finds the static head in its cache, never the
    request itself (each layout of a request would otherwise read the one before it from the cache)."""

    def __init__(self, llm, marker: str) -> None:
        self.llm, self.marker = llm, marker

    def structured(self, role, messages, schema, **kw):
        marked = [(r, f"({self.marker}) {text}" if r == "user" else text) for r, text in messages]
        return self.llm.structured(role, marked, schema, **kw)


def requests(cphos_dir: Path, retail_dir: Path, n_cphos: int, per_group: int,
             n_retail: int) -> list[tuple[str, str, str]]:
    """(domain, message, the right first operation) of the requests."""
    rows = first_per_group(read_system(cphos_dir / "qa" / "system.csv"), per_group)[:n_cphos]
    out = [("cphos", c.text, c.gold_api) for c in rows if c.gold_api]
    tasks = json.loads((retail_dir / "tasks" / "train.json").read_text("utf-8"))
    scripts = {str(s["task_id"]): s for s in json.loads((retail_dir / "users" / "train.json").read_text("utf-8"))
               ["scripts"]}
    for task in tasks[:n_retail]:
        first = next((a["name"] for a in task["evaluation_criteria"]["actions"] if a["name"] not in SIGN_IN), None)
        if first and str(task["id"]) in scripts:
            out.append(("retail", scripts[str(task["id"])]["opening"], first))
    return out


def run(args) -> dict:
    """Every request through every layout; the figures per domain and layout."""
    settings = get_settings()
    llm, embedder = build_llm(settings), make_embedder(settings)
    packs = {name: load_pack(name) for name in ("cphos", "retail")}
    variants = args.variants.split(",")
    executors: dict[tuple[str, str], FirstStep] = {}
    for name, pack in packs.items():
        ops = operations(name)
        text = "\n".join(operation_lines(ops))
        for n, variant in enumerate(variants):
            layout, _, k = variant.partition("@")
            ranker = ToolRanker(ops, embedder, top_k=int(k)) if k else None
            ex = FirstStep(Marked(llm, f"v{n}"), None, Retriever(None, settings), ops, text, steps=1,
                           tools=ranker, layout=layout)
            executors[(name, variant)] = ex
            with pack_prompts(pack.prompts):
                llm.warm("executor", system_part("pipeline_execute_system", {"operations": ex.static_operations}))
    rows = []
    asked = requests(args.cphos_dir, args.retail_dir, args.cphos, args.per_group, args.retail)
    # One pass per variant: the engine's slot then last held the previous request of the same variant, as in
    # a running service (the inline layouts' short lists share their first lines, so some of those are cached).
    for layout in variants:
        for n, (domain, text, right) in enumerate(asked):
            trace = Trace()
            trace.iteration = 1
            ctx = TurnContext(nickname="bench", text=text, profile=None, history=[], trace=trace)
            try:
                with pack_prompts(packs[domain].prompts):
                    executors[(domain, layout)].propose_operation(ctx)
            except LLMError as exc:  # a timeout on a busy machine: counted, not fatal
                rows.append({"domain": domain, "request": n, "layout": layout, "error": exc.code})
                continue
            rec = trace.ledger.records[-1]
            calls = trace.info.get("calls", ["AnswerDirectly"])  # an answer returns before any plan runs
            rows.append({"domain": domain, "request": n, "layout": layout, "prompt": rec.prompt_tokens,
                         "read": (rec.prompt_tokens or 0) - (rec.cached_tokens or 0),
                         "generated": rec.completion_tokens,
                         "latency_s": rec.latency_s, "calls": calls, "right": bool(calls) and calls[0] == right,
                         "listed": right in (ctx.shortlist or (right,))})
    llm.close()
    summary = {}
    for domain in packs:
        for layout in variants:
            mine = [r for r in rows if r["domain"] == domain and r["layout"] == layout and "error" not in r]
            if mine:
                summary[f"{domain} {layout}"] = {
                    "n": len(mine), "right": sum(r["right"] for r in mine), "listed": sum(r["listed"] for r in mine),
                    **{k: round(statistics.fmean(r[k] for r in mine), 1) for k in ("prompt", "read", "generated")},
                    "median_latency_s": round(statistics.median(r["latency_s"] for r in mine), 2)}
    return {"threads": settings.local_threads, "summary": summary, "rows": rows,
            "errors": sum("error" in r for r in rows)}


def main(argv: list[str] | None = None) -> int:
    """Print the table (or JSON)."""
    ap = argparse.ArgumentParser(prog="python -m bench.tool_layouts", description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default=VARIANTS, help="comma-separated: all, cached@K, inline@K")
    ap.add_argument("--cphos", type=int, default=17, help="CPHOS requests (the first of each intent: 17)")
    ap.add_argument("--per-group", type=int, default=1, help="CPHOS rows per intent (4: all 68)")
    ap.add_argument("--retail", type=int, default=12, help="retail train openings")
    ap.add_argument("--cphos-dir", type=Path, default=Path(os.environ.get("CHOPS_CPHOS_DIR", "../shared/cphos")))
    ap.add_argument("--retail-dir", type=Path,
                    default=Path(os.environ.get("CHOPS_RETAIL_DIR", "../shared/tau2-retail")))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    report = run(args)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{report['threads']} threads; means per executor call; {report['errors']} calls failed (left out)")
    print("| domain, variant | n | right first op | gold listed | prompt tokens | read (not cached) | generated "
          "| median s |\n|---|---|---|---|---|---|---|---|")
    for key, s in report["summary"].items():
        print(f"| {key} | {s['n']} | {s['right']} | {s['listed']} | {s['prompt']} | {s['read']} | {s['generated']} "
              f"| {s['median_latency_s']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
