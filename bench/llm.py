"""Local-model benchmark: the model calls of real pipeline turns, replayed warm on each engine set-up.

    python -m bench.llm [--repeats N] [--previous-python PATH] [--json]

The agent first runs three of our demo requests (a write, a guide question, a profile question) on
the embedded engine, and every model call it makes (role, messages, schema) is recorded. Those calls
are then replayed, request by request, ``repeats`` times after one unmeasured warm-up round, on:

engine            llama.cpp's server engine in process (xllamacpp): compact-JSON grammar, slot caches
engine, spaced    the same engine with the standard ``response_format`` (JSON with optional
                  whitespace): what compact output saves
previous          llama-cpp-python with the project's former set-up (one context behind a lock, RAM
                  prefix cache, ``json_object`` + schema), when ``--previous-python`` names a Python
                  that has ``llama_cpp`` installed (it runs ``bench/llm_previous.py`` there)

Per request kind it prints the median wall time of all its calls, evaluated prompt tokens (the ones
not found in a cache) and generated tokens per role, and for the guide answer the time to its first
streamed piece. Threads: ``CHOPS_LOCAL_THREADS`` (default 2).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chops.llm import LLMError, build_llm
from chops.settings import Roles, get_settings

REQUESTS = [("system", "demo_leader", "Please change my upload limit to 40."),
            ("guide", "demo_leader", "Can I upload answer sheets after the deadline?"),
            ("basic_info", "demo_busy_leader", "How many problems do I still have to mark?")]
PREVIOUS = Path(__file__).with_name("llm_previous.py")


def record(llm, settings) -> dict[str, list[tuple[str, list, type]]]:
    """The model calls each demo request makes, in order (the requests run once, for real)."""
    from apis.cphos.db import init_schema
    from apis.cphos.loaders import seed_demo
    from apis.cphos.pack import pack as cphos_pack
    from apis.cphos.service import Api
    from chops.db import make_engine
    from chops.pipeline import Agent
    from chops.retrieval import GuideIndex
    from chops.store import ConversationStore

    index = GuideIndex.load_or_build(settings.guides_dir, settings)
    calls: list = []
    real = llm.structured

    def recording(role, messages, schema, **kw):
        calls.append((role, list(messages), schema))
        return real(role, messages, schema, **kw)

    llm.structured = recording
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, nick, text in REQUESTS:
            engine = make_engine(f"sqlite:///{Path(tmp) / f'{kind}.db'}")
            init_schema(engine)
            seed_demo(engine)
            calls.clear()
            api = Api(engine)
            Agent(api, llm, settings, index, approvals=ConversationStore(engine, api=api),
                  prompts=cphos_pack.prompts).handle(
                nick, text, turn_key=f"bench-llm-{kind}:1")
            out[kind] = list(calls)
            engine.dispose()
    llm.structured = real
    return out


def spaced_llm(llm):
    """The same running engine reached as a plain OpenAI-compatible endpoint: the standard
    ``response_format``, so the grammar allows whitespace (and no prompt-cache request field)."""
    engine = llm.provider("executor").engine
    os.environ["CHOPS_BENCH_ENGINE_KEY"] = engine.api_key
    role = {"provider": "openai", "model": engine.config.path.stem, "base_url": engine.base_url,
            "api_key_env": "CHOPS_BENCH_ENGINE_KEY"}
    roles = {r: {**role, "max_tokens": get_settings().roles.get(r).max_tokens} for r in ("classifier", "executor", "verifier")}
    return build_llm(get_settings(roles=roles))


def replay(llm, recorded: dict, repeats: int, tag: str) -> dict:
    """Replay the recorded calls; per request kind the median figures over ``repeats`` rounds.
    ``tag`` keeps each set-up's requests new to the engine (see ``fresh``)."""
    rounds: dict[str, list[dict]] = {kind: [] for kind in recorded}
    for rnd in range(repeats + 1):  # round 0 only warms the caches
        for kind, calls in recorded.items():
            before = len(llm.ledger)
            first = []
            t0 = time.perf_counter()
            for role, messages, schema in calls:
                stream = kind != "system" and role == "executor"
                llm.structured(role, fresh(messages, f"{tag}{rnd}"), schema, on_delta=(lambda _p: first.append(
                    time.perf_counter() - t0) if not first else None) if stream else None)
            wall = time.perf_counter() - t0
            if rnd:
                rounds[kind].append(_figures(llm.ledger.records[before:], wall, first))
    return {kind: {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}
            for kind, rows in rounds.items()}


def fresh(messages: list, rnd: str) -> list:
    """The messages with a round marker before the user part: each round the static system part comes
    from the cache while the request's own tokens are new, as for a real new request (the same
    marker scheme in ``bench/llm_previous.py``)."""
    return [(role, f"(round {rnd}) {text}" if role == "user" else text) for role, text in messages]


def _figures(recs, wall: float, first: list[float]) -> dict:
    fig = {"calls": len(recs), "latency_s": wall, "first_piece_s": first[0] if first else 0.0}
    for rec in recs:
        evaluated = (rec.prompt_tokens or 0) - (rec.cached_tokens or 0)
        fig[f"{rec.role}_eval"] = fig.get(f"{rec.role}_eval", 0) + evaluated
        fig[f"{rec.role}_gen"] = fig.get(f"{rec.role}_gen", 0) + (rec.completion_tokens or 0)
    return fig


def previous(python: str, recorded: dict, repeats: int, settings) -> dict:
    """The same replay on llama-cpp-python, run by ``bench/llm_previous.py`` in another interpreter."""
    from chops.llm.chat import response_format

    job = {"model": str(settings.model_path), "threads": settings.local_threads, "repeats": repeats,
           "requests": {kind: [{"role": role, "messages": messages, "response_format": response_format(schema),
                                "max_tokens": settings.roles.get(role).max_tokens} for role, messages, schema in calls]
                        for kind, calls in recorded.items()}}
    done = subprocess.run([python, str(PREVIOUS)], input=json.dumps(job), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{PREVIOUS.name} exited {done.returncode}: {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Print the side-by-side table (or JSON)."""
    ap = argparse.ArgumentParser(prog="python -m bench.llm", description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--previous-python", default=None, help="a Python with llama_cpp, for the former engine")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    settings = get_settings(roles=Roles())
    try:
        llm = build_llm(settings)
        t0 = time.perf_counter()
        llm.load()
        load_s = time.perf_counter() - t0
        recorded = record(llm, settings)
        results = {"engine": replay(llm, recorded, args.repeats, "e"),
                   "engine, spaced": replay(spaced_llm(llm), recorded, args.repeats, "s")}
    except LLMError as exc:
        print(f"benchmark needs the local model: {exc}", file=sys.stderr)
        return 1
    llm.close()
    if args.previous_python:
        try:
            results["previous"] = previous(args.previous_python, recorded, args.repeats, settings)
        except RuntimeError as exc:
            print(f"previous engine failed: {exc}", file=sys.stderr)
    meta = {"model": settings.model_path.name, "threads": settings.local_threads, "load_s": round(load_s, 1),
            "repeats": args.repeats, "load_average": [round(x, 1) for x in os.getloadavg()]}
    if args.json:
        print(json.dumps({"meta": meta, "results": results}, indent=2))
        return 0
    print(f"{meta['model']}  threads={meta['threads']}  engine load {meta['load_s']} s  medians of "
          f"{meta['repeats']} warm rounds  load average {meta['load_average']}")
    head = f"{'set-up':<15} {'request':<10} {'calls':>5} {'latency s':>9} {'1st piece s':>11}"
    roles = ("classifier", "executor", "verifier")
    print(head + "".join(f" {r[:5] + ' eval/gen':>15}" for r in roles))
    for setup, kinds in results.items():
        for kind, fig in kinds.items():
            cols = "".join(f" {fig.get(f'{r}_eval', 0):>7.0f}/{fig.get(f'{r}_gen', 0):<7.0f}" for r in roles)
            print(f"{setup:<15} {kind:<10} {fig['calls']:>5.0f} {fig['latency_s']:>9} {fig['first_piece_s']:>11}{cols}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
