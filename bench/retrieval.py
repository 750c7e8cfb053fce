"""Retrieval benchmark over the CPHOS guides: recall@1/3/5 per chunk size and mode, index
build time, median query latency; then the guide executor's excerpt budget per long chunk size and k.

    python -m bench.retrieval [--guides DIR] [--qa CSV] [--repeats N] [--builds N] [--json]
                              [--long-sizes 400,600,800,1200] [--ks 1,2,3] [--windows 1,2]
                              [--tokens model|estimate]

Questions are the rows of ``qa/guide.csv`` with category ``guide``; the page(s) holding each
answer come from ``bench/guide_answers.json`` (our annotation: ids and file/page only). A
question counts as found at k when one of the top-k chunks comes from an answer page.
The index is built in a temporary data directory, so the build is always a real one.

The excerpt table (``bench.excerpts``) adds, for every ``--long-sizes`` x ``--ks`` configuration,
answer coverage (``bench.coverage``: is the gold answer's content in the excerpts, not only a chunk
of its page) and what the executor reads per question: characters and tokens of the rendered
excerpts. The configured ``chunk_long``/``k_long`` row is marked with *.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import excerpts
from chops.retrieval.embedders import make_embedder
from chops.retrieval.index import SIZES, GuideIndex
from chops.settings import get_settings

ANSWERS = Path(__file__).with_name("guide_answers.json")
KS = (1, 3, 5)
MODES = ("dense", "fused")


def load_questions(qa_csv: Path, answers_json: Path) -> list[tuple[str, str, set[tuple[str, int]]]]:
    """(src_row, question, gold pages) for every guide row; an unannotated row is an error, so
    a changed dataset cannot silently shrink the benchmark."""
    groups = json.loads(answers_json.read_text())["groups"]
    gold_of_row = {}
    for group_id, group in groups.items():
        pages = {(a["file"], int(a["page"])) for a in group["answers"]}
        for row in group["src_rows"]:
            gold_of_row[str(row)] = (group_id, pages)
    questions = []
    with open(qa_csv, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["category"] != "guide":
                continue
            if row["src_row"] not in gold_of_row or gold_of_row[row["src_row"]][0] != row["group_id"]:
                raise SystemExit(f"guide row {row['src_row']} ({row['group_id']}) is not annotated in {answers_json}")
            questions.append((row["src_row"], row["questions"], gold_of_row[row["src_row"]][1]))
    if not questions:
        raise SystemExit(f"no guide rows in {qa_csv}")
    return questions


def first_hit(chunks, gold: set[tuple[str, int]]) -> int | None:
    """1-based rank of the first chunk from a gold page, or None."""
    for rank, chunk in enumerate(chunks, start=1):
        if (chunk.file, chunk.page) in gold:
            return rank
    return None


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def run(guides: Path, qa_csv: Path, repeats: int, builds: int, long_sizes: list[int] = (), ks: list[int] = (),
        windows: list[int] = (), model_tokens: bool = True) -> dict:
    """Build the index, run every question in every size and mode; then the excerpt grid (when
    ``long_sizes``); return the figures."""
    questions = load_questions(qa_csv, ANSWERS)
    with tempfile.TemporaryDirectory() as tmp:
        settings = get_settings(data_dir=Path(tmp))
        embedder = make_embedder(settings)
        started = time.perf_counter()
        embedder.embed(["load the model"])
        model_load_s = time.perf_counter() - started
        build_times = []
        for _ in range(builds):
            started = time.perf_counter()
            index = GuideIndex.load_or_build(guides, settings, embedder, force=True)
            build_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        GuideIndex.load_or_build(guides, settings, embedder)
        load_s = time.perf_counter() - started

        embed_times = []
        for _ in range(repeats):
            for _, question, _ in questions:
                started = time.perf_counter()
                embedder.embed([question])
                embed_times.append(time.perf_counter() - started)

        results = {}
        for mode in MODES:
            for size in SIZES:
                ranks, latencies = [], []
                for _ in range(repeats):
                    for _, question, gold in questions:
                        index.query_vector.cache_clear()  # time the full search, embedding included
                        started = time.perf_counter()
                        found = index.search(question, k=max(KS), size=size, mode=mode)
                        latencies.append(time.perf_counter() - started)
                        ranks.append(first_hit(found, gold))
                ranks = ranks[:len(questions)]  # retrieval is deterministic; repeats only time it
                results[f"{mode}/{size}"] = {
                    **{f"recall@{k}": sum(r is not None and r <= k for r in ranks) / len(ranks) for k in KS},
                    "misses@3": sorted({q[0] for q, r in zip(questions, ranks) if r is None or r > 3}, key=int),
                    "median_query_ms": statistics.median(latencies) * 1000,
                    "p90_query_ms": statistics.quantiles(latencies, n=10)[-1] * 1000,
                }
        grid, tokenizer = {}, None
        if long_sizes and ks:
            sets = excerpts.question_sets(guides, qa_csv, questions)
            # The installed model lives in the real data directory, not in this temporary one.
            count, tokenizer = excerpts.token_counter(get_settings(), model_tokens)
            grid = excerpts.grid(guides, sets, settings, embedder, sorted(set(long_sizes)), ks, windows,
                                 settings.retrieval_mode, count)
        return {
            "guides": str(guides),
            "questions": len(questions),
            "distinct_questions": len({q[1].strip().lower() for q in questions}),
            "chunks": {size: len(index.chunks[size]) for size in SIZES},
            "chunk_sizes": {"short": settings.chunk_short, "long": settings.chunk_long},
            "embedder": embedder.name,
            "model_load_s": model_load_s,
            "index_build_s_median": statistics.median(build_times),
            "index_load_s": load_s,
            "median_query_embed_ms": statistics.median(embed_times) * 1000,
            "results": results,
            "excerpts": grid,
            "excerpts_baseline": f"long {settings.chunk_long} k={settings.k_long}",
            "tokenizer": tokenizer,
        }


def print_report(report: dict) -> None:
    """A plain-text table of the figures."""
    print(f"guides: {report['guides']}  embedder: {report['embedder']}")
    print(f"questions: {report['questions']} ({report['distinct_questions']} distinct)  "
          f"chunks: short={report['chunks']['short']} long={report['chunks']['long']}  "
          f"sizes: {report['chunk_sizes']}")
    print(f"model load: {report['model_load_s']:.2f} s  index build (median): "
          f"{report['index_build_s_median']:.2f} s  index load: {report['index_load_s'] * 1000:.1f} ms  "
          f"query embedding (median): {report['median_query_embed_ms']:.2f} ms")
    print(f"{'mode/size':<14}{'R@1':>7}{'R@3':>7}{'R@5':>7}{'median ms':>11}{'p90 ms':>9}  misses@3 (src_row)")
    for name, r in report["results"].items():
        print(f"{name:<14}{r['recall@1']:>7.3f}{r['recall@3']:>7.3f}{r['recall@5']:>7.3f}"
              f"{r['median_query_ms']:>11.2f}{r['p90_query_ms']:>9.2f}  {','.join(r['misses@3']) or '-'}")
    if report.get("excerpts"):
        excerpts.print_grid(report["excerpts"], report["excerpts_baseline"], report["tokenizer"])


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    settings = get_settings()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guides", type=Path, default=settings.cphos_dir / "guides")
    parser.add_argument("--qa", type=Path, default=settings.cphos_dir / "qa" / "guide.csv")
    parser.add_argument("--repeats", type=int, default=5, help="timed passes over the questions")
    parser.add_argument("--builds", type=int, default=3, help="timed index builds")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--long-sizes", type=_ints, default=[400, 600, 800, 1200],
                        help="chunk_long values of the excerpt table (comma-separated; the configured one is "
                        "always added; empty: no excerpt table)")
    parser.add_argument("--ks", type=_ints, default=[1, 2, 3], help="k_long values of the excerpt table")
    parser.add_argument("--windows", type=_ints, default=[1, 2],
                        help="neighbour radii of the sentence-window rows (short chunks widened; empty: none)")
    parser.add_argument("--tokens", choices=("model", "estimate"), default="model",
                        help="count tokens with the installed local model's tokenizer, or estimate chars/4")
    args = parser.parse_args(argv)
    sizes = [*args.long_sizes, settings.chunk_long] if args.long_sizes else []
    report = run(args.guides, args.qa, args.repeats, args.builds, sizes, args.ks, args.windows,
                 args.tokens == "model")
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print_report(report)


if __name__ == "__main__":
    main()
