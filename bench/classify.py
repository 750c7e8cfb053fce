"""Accuracy probe of the classifier alone, on the local model: the route of every message.

    python -m bench.classify [--cphos-dir DIR] [--only cphos|manners] [--json]

Messages: the visible CPHOS rows (expected route from the row's category; rows of people who are not
in the system never reach the classifier and are left out) and ``eval/cases/manners.json``, requests
written for this product (greetings, thanks, "never mind", asking for a person, off-topic questions,
how-to questions, and requests that start with a greeting). Each message is classified once, as the
first iteration of a new conversation, exactly as the agent does it. Prints the accuracy per expected
route, every miss, and the median time of one classification. Threads: ``CHOPS_LOCAL_THREADS``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import Counter
from pathlib import Path

from apis.registry import operation_lines
from chops.llm import build_llm
from chops.pipeline.classifier import Classifier
from chops.pipeline.context import TurnContext
from chops.pipeline.retrieval import Retriever
from chops.pipeline.trace import Trace
from chops.settings import get_settings
from eval.dataset import load_cases

MANNERS = Path(__file__).resolve().parents[1] / "eval" / "cases" / "manners.json"


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
    """Classify every message; the per-route tally, the misses and the timings."""
    settings = get_settings()
    llm = build_llm(settings)
    classifier = Classifier(llm, Retriever(None, settings), "\n".join(operation_lines()))
    tally: dict[str, Counter] = {}
    misses, seconds = [], []
    for source, text, expected in messages(cphos_dir, only):
        trace = Trace()
        trace.iteration = 1
        ctx = TurnContext(nickname="bench", text=text, profile=None, history=[], trace=trace)
        t0 = time.perf_counter()
        got = classifier.classify(ctx)
        seconds.append(time.perf_counter() - t0)
        tally.setdefault(expected, Counter())["right" if got == expected else "wrong"] += 1
        if got != expected:
            misses.append({"source": source, "text": text, "expected": expected, "got": got})
    right = sum(c["right"] for c in tally.values())
    return {"threads": settings.local_threads, "messages": len(seconds), "right": right,
            "per_route": {k: dict(v) for k, v in sorted(tally.items())}, "misses": misses,
            "median_s": round(statistics.median(seconds), 3) if seconds else None}


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
    print(f"classifier on {report['messages']} messages, {report['threads']} threads: "
          f"{report['right']}/{report['messages']} right, median {report['median_s']} s per message")
    for route, counts in report["per_route"].items():
        total = counts.get("right", 0) + counts.get("wrong", 0)
        print(f"  {route:<13} {counts.get('right', 0):>3}/{total}")
    for miss in report["misses"]:
        print(f"  miss {miss['source']:<11} expected {miss['expected']:<12} got {miss['got']!s:<12} {miss['text']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
