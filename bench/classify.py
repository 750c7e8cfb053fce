"""Accuracy probe of the classifier alone, on the local model: the route of every message.

    python -m bench.classify [--cphos-dir DIR] [--only cphos|manners] [--json]

Messages: the visible CPHOS rows (expected route from the row's category; rows of people who are not
in the system never reach the classifier and are left out) and ``eval/cases/manners.json``, requests
written for this product (greetings, thanks, "never mind", asking for a person, off-topic questions,
how-to questions, and requests that start with a greeting). Each message is classified once, as the
first iteration of a new conversation, three ways: the embedding router alone (its best guess), the
model classifier alone, and both (the router when it is sure, else the model: what the agent does).
Prints the accuracy per expected route and way, the router's fallback rate, every miss of "both" and
"model", and the time per message. Threads: ``CHOPS_LOCAL_THREADS``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import Counter
from pathlib import Path

from apis.cphos.pack import pack
from apis.cphos.registry import OPERATIONS
from chops.domain.operations import operation_lines
from chops.llm import build_llm
from chops.pipeline.classifier import Classifier
from chops.pipeline.context import TurnContext
from chops.pipeline.prompting import pack_prompts
from chops.pipeline.retrieval import Retriever
from chops.pipeline.trace import Trace
from chops.retrieval.embedders import make_embedder
from chops.router import build_router
from chops.settings import get_settings
from eval.dataset import load_cases

MANNERS = Path(__file__).resolve().parents[1] / "eval" / "cases" / "manners.json"
MODES = ("router", "model", "both")


def messages(cphos_dir: Path, only: str | None) -> list[tuple[str, str, str]]:
    """(source, text, expected route) of every message to classify."""
    out: list[tuple[str, str, str]] = []
    if only in (None, "cphos"):
        out += [(case.case_id, case.text, case.expected_route) for case in load_cases(cphos_dir / "qa")
                if case.expected_route not in (None, "not_in_system")]
    if only in (None, "manners"):
        out += [("manners", c["text"], c["route"]) for c in json.loads(MANNERS.read_text("utf-8"))["cases"]]
    return out


def run(cphos_dir: Path, only: str | None) -> dict:
    """Classify every message three ways — the router alone (its best guess, sure or not), the model alone
    (today's gate and two levels) and both (the router when sure, else the model, as the agent does) —
    and tally each: accuracy per expected route, the misses, the router's fallback rate, and timings."""
    settings = get_settings()
    llm = build_llm(settings)
    classifier = Classifier(llm, Retriever(None, settings), "\n".join(operation_lines(OPERATIONS)))
    router = build_router(settings.data_dir, settings.router_examples or pack.router_examples, make_embedder(settings))
    tally: dict[str, dict[str, Counter]] = {mode: {} for mode in MODES}
    misses: dict[str, list] = {mode: [] for mode in MODES}
    seconds: dict[str, list[float]] = {mode: [] for mode in MODES}
    unsure = 0
    for source, text, expected in messages(cphos_dir, only):
        t0 = time.perf_counter()
        decision = router.decide(text)
        t1 = time.perf_counter()
        trace = Trace()
        trace.iteration = 1
        with pack_prompts(pack.prompts):  # CPHOS's own wording, as the pack's Agent would use
            model = classifier.classify(TurnContext(nickname="bench", text=text, profile=None, history=[],
                                                    trace=trace))
        t2 = time.perf_counter()
        unsure += not decision.sure
        got = {"router": decision.route, "model": model, "both": decision.route if decision.sure else model}
        spent = {"router": t1 - t0, "model": t2 - t1, "both": (t1 - t0) + (0 if decision.sure else t2 - t1)}
        for mode in MODES:
            seconds[mode].append(spent[mode])
            tally[mode].setdefault(expected, Counter())["right" if got[mode] == expected else "wrong"] += 1
            if got[mode] != expected:
                misses[mode].append({"source": source, "text": text, "expected": expected, "got": got[mode],
                                     "router_sure": decision.sure, "confidence": decision.confidence})
    n = len(seconds["model"])
    return {"threads": settings.local_threads, "messages": n, "router_threshold": round(router.threshold, 3),
            "fallback_rate": round(unsure / n, 3) if n else None,
            "modes": {mode: {"right": sum(c["right"] for c in tally[mode].values()),
                             "per_route": {k: dict(v) for k, v in sorted(tally[mode].items())},
                             "median_s": round(statistics.median(seconds[mode]), 4) if n else None,
                             "mean_s": round(statistics.fmean(seconds[mode]), 4) if n else None,
                             "misses": misses[mode]} for mode in MODES}}


def main(argv: list[str] | None = None) -> int:
    """Print the probe's table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cphos-dir", type=Path,
                        default=Path(os.environ.get("CHOPS_CPHOS_DIR", "../shared/cphos")))
    parser.add_argument("--only", choices=["cphos", "manners"], default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.cphos_dir, args.only)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0
    n = report["messages"]
    print(f"{n} messages, {report['threads']} threads; router threshold {report['router_threshold']}, "
          f"falls back to the model on {report['fallback_rate']:.1%}")
    routes = sorted({r for m in report["modes"].values() for r in m["per_route"]})
    print(f"| route | {' | '.join(MODES)} |\n|---|{'---|' * len(MODES)}")
    for route in routes:
        cells = []
        for mode in MODES:
            counts = report["modes"][mode]["per_route"].get(route, {})
            cells.append(f"{counts.get('right', 0)}/{counts.get('right', 0) + counts.get('wrong', 0)}")
        print(f"| {route} | {' | '.join(cells)} |")
    print("| all | " + " | ".join(f"{report['modes'][m]['right']}/{n}" for m in MODES) + " |")
    print("| median s / message | " + " | ".join(str(report["modes"][m]["median_s"]) for m in MODES) + " |")
    print("| mean s / message | " + " | ".join(str(report["modes"][m]["mean_s"]) for m in MODES) + " |")
    for mode in ("both", "model"):
        for miss in report["modes"][mode]["misses"]:
            print(f"  {mode} miss {miss['source']:<11} expected {miss['expected']:<12} got {miss['got']!s:<12} "
                  f"(router {'sure' if miss['router_sure'] else 'unsure'} {miss['confidence']}) {miss['text']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
