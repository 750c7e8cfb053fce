"""Tool retrieval: does the short list of operations (``chops.pipeline.tools``) hold the ones a request needs?

    python -m bench.tools [--cphos-dir DIR] [--retail-dir DIR] [--json]

Requests, with their gold operations:
cphos            the rows of ``qa/system.csv`` (their annotated ``gold_api``); one operation each
retail writes    the tau2-retail train tasks: the scripted user's opening message (``users/train.json``),
                 gold = the writes among the task's reference actions (the 6 tasks without a write are left
                 out)
retail all       the same openings, gold = every operation of the reference actions but the sign-in checks
                 (``find_user_id_*``: the customer is signed in by token) and the hand-off (a route here)

A request counts as found at k when ALL its gold operations are in the list. Three ways to build the list
from the ranking: ``top-k`` alone; ``+needs`` (top-k and the look-ups they declare, what the executor uses);
``+look-ups`` (top-k and every look-up the pack has, the blunt alternative). Each cell is the recall and the
mean list length. ``all`` is the whole registry (recall 100 % by construction).

Follow-ups (retail writes, top-3 +needs): the user's answer to "which order?" / "which payment method?"
(the script's ``oid`` and ``pay`` replies) ranked with the opening as the previous message, per weight of
that previous message; and, against that, a change of subject: one task's opening ranked with another
task's opening (of other writes) as the previous message. Also the time per ranking. The dataset rows are
read from the shared directories at run time, never copied here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import sqlalchemy as sa

from chops.domain.pack import load_pack
from chops.pipeline.tools import ToolRanker
from chops.retrieval.embedders import make_embedder
from chops.settings import get_settings
from eval.dataset import load_cases

KS = (1, 3, 5)
WAYS = ("top-k", "+needs", "+look-ups")
WEIGHTS = (0.0, 0.25, 0.5, 1.0)
SIGN_IN = {"find_user_id_by_email", "find_user_id_by_name_zip"}


def operations(domain: str) -> dict:
    """The registry of the installed pack ``domain`` (its Api over an empty in-memory database)."""
    return dict(load_pack(domain).api(sa.create_engine("sqlite://")).operations)


def retail_requests(retail_dir: Path, ops: dict) -> dict[str, list[dict]]:
    """Per gold kind, ``{"text", "gold", "replies"}`` of every train task with a scripted opening."""
    tasks = json.loads((retail_dir / "tasks" / "train.json").read_text("utf-8"))
    scripts = {str(s["task_id"]): s for s in json.loads((retail_dir / "users" / "train.json").read_text("utf-8"))
               ["scripts"]}
    out: dict[str, list[dict]] = {"retail writes": [], "retail all": []}
    for task in tasks:
        script = scripts.get(str(task["id"]))
        if not script:
            continue
        names = {a["name"] for a in task["evaluation_criteria"]["actions"]} & set(ops)
        replies = [r["say"] for r in script["replies"] if r.get("id") in ("oid", "pay")]
        writes = {n for n in names if ops[n].writes}
        if writes:
            out["retail writes"].append({"text": script["opening"], "gold": writes, "replies": replies})
        out["retail all"].append({"text": script["opening"], "gold": names - SIGN_IN, "replies": replies})
    return out


def listed(ranker: ToolRanker, names: tuple[str, ...], k: int, way: str) -> set[str]:
    """The list ``way`` builds from the ranking ``names`` at ``k``."""
    top = list(names[:k])
    if way == "+needs":
        return set(ranker.expand(top))
    if way == "+look-ups":
        return set(top) | {n for n, op in ranker.operations.items() if op.observe and not op.writes}
    return set(top)


def recall_table(ranker: ToolRanker, requests: list[dict]) -> dict:
    """Per way and k: recall (all gold in the list) and mean list length; plus the ranking times."""
    seconds, ranked = [], []
    for req in requests:
        t0 = time.perf_counter()
        ranked.append(ranker.rank(req["text"]).names)
        seconds.append(time.perf_counter() - t0)
    table: dict = {}
    for way in WAYS:
        for k in KS:
            lists = [listed(ranker, names, k, way) for names in ranked]
            hits = sum(req["gold"] <= got for req, got in zip(requests, lists, strict=True))
            table[f"{way}@{k}"] = {"recall": round(hits / len(requests), 3),
                                   "size": round(statistics.fmean(len(got) for got in lists), 1)}
    table["all"] = {"recall": 1.0, "size": len(ranker.operations)}
    return {"requests": len(requests), "cells": table, "median_ms": round(1000 * statistics.median(seconds), 2)}


def follow_ups(ranker: ToolRanker, requests: list[dict], k: int = 3) -> dict:
    """Recall at ``k`` (+needs) of follow-ups with their opening as previous message, and of a change of
    subject (another task's opening as previous), per weight of the previous message."""
    pairs = [(reply, req["text"], req["gold"]) for req in requests for reply in req["replies"]]
    # A change of subject: the previous message is the next task whose writes differ.
    switches = []
    for i, req in enumerate(requests):
        other = next((o for o in requests[i + 1:] + requests[:i] if not (o["gold"] & req["gold"])), None)
        if other is not None:
            switches.append((req["text"], other["text"], req["gold"]))
    out = {}
    for weight in WEIGHTS:
        ranker.previous_weight = weight
        row = {}
        for kind, items in (("follow_up", pairs), ("switch", switches)):
            hits = sum(gold <= set(ranker.expand(ranker.rank(text, prev).names[:k])) for text, prev, gold in items)
            row[kind] = round(hits / len(items), 3) if items else None
        out[str(weight)] = row
    return {"k": k, "follow_ups": len(pairs), "switches": len(switches), "by_weight": out}


def run(cphos_dir: Path, retail_dir: Path) -> dict:
    """Every table of the benchmark."""
    embedder = make_embedder(get_settings())
    t0 = time.perf_counter()
    embedder.embed(["warm up"])
    load_s = time.perf_counter() - t0
    cphos_ops, retail_ops = operations("cphos"), operations("retail")
    cphos = ToolRanker(cphos_ops, embedder, top_k=3)
    retail = ToolRanker(retail_ops, embedder, top_k=3)
    t0 = time.perf_counter()
    retail.vectors()
    embed_ops_s = time.perf_counter() - t0
    cases = load_cases(cphos_dir / "qa", only="system")
    requests = {"cphos": [{"text": c.text, "gold": {c.gold_api}} for c in cases if c.gold_api]}
    requests.update(retail_requests(retail_dir, retail_ops))
    tables = {name: recall_table(cphos if name == "cphos" else retail, reqs) for name, reqs in requests.items()}
    return {"embedder": embedder.name, "load_s": round(load_s, 2), "embed_operations_ms": round(1000 * embed_ops_s, 1),
            "tables": tables, "follow_ups": follow_ups(retail, requests["retail writes"])}


def main(argv: list[str] | None = None) -> int:
    """Print the recall tables (or JSON)."""
    ap = argparse.ArgumentParser(prog="python -m bench.tools", description=__doc__.splitlines()[0])
    ap.add_argument("--cphos-dir", type=Path, default=Path(os.environ.get("CHOPS_CPHOS_DIR", "../shared/cphos")))
    ap.add_argument("--retail-dir", type=Path,
                    default=Path(os.environ.get("CHOPS_RETAIL_DIR", "../shared/tau2-retail")))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    report = run(args.cphos_dir, args.retail_dir)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{report['embedder']}; the 15 shop operations embedded in {report['embed_operations_ms']} ms")
    cols = [f"{way}@{k}" for way in WAYS for k in KS] + ["all"]
    print("| requests | n | " + " | ".join(cols) + " | ms / ranking |")
    print("|---|---|" + "---|" * (len(cols) + 1))
    for name, tab in report["tables"].items():
        cells = [f"{100 * tab['cells'][c]['recall']:.0f} % ({tab['cells'][c]['size']})" for c in cols]
        print(f"| {name} | {tab['requests']} | " + " | ".join(cells) + f" | {tab['median_ms']} |")
    fu = report["follow_ups"]
    print(f"\nprevious message's weight: recall@{fu['k']} +needs of {fu['follow_ups']} follow-ups "
          f"and {fu['switches']} changes of subject")
    print("| weight | follow-up | change of subject |\n|---|---|---|")
    for weight, row in fu["by_weight"].items():
        print(f"| {weight} | {100 * row['follow_up']:.0f} % | {100 * row['switch']:.0f} % |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
