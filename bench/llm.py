"""Local-model benchmark: a ~250-token prompt with a ~50-token structured answer, cold and warm.

    python -m bench.llm [--repeats N] [--json]

cold      the whole prompt is evaluated (empty KV state, empty prefix cache)
warm      same static prefix (instructions + operation list) as the previous call, a new question
alternate like ``warm`` but another prompt ran in between (a different role), so the prefix comes
          back from the RAM prefix cache (``Llama.set_cache``) rather than the live context

Figures come from llama.cpp's own counters (``pp tok/s`` is over the prompt tokens actually evaluated,
so for warm calls it covers only the ~15 new tokens and mostly shows per-call overhead); latency is wall time of the call. Medians over the repeats.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Literal

from pydantic import BaseModel, Field

from chops.llm import LLMError, build_llm
from chops.llm.base import load_prompt, parse_structured
from chops.llm.chat import response_format, to_langchain
from chops.settings import Roles, get_settings

Operation = Literal["QueryLimit", "ModifyLimit", "QuerySubject", "ModifySubject", "QueryTeamLeader",
                    "ModifyName", "QueryProblemsLeft", "AddViceLeader"]


class Proposal(BaseModel):
    """The structured answer: ~50 tokens of JSON."""

    operation: Operation
    Limit: int | None = None
    SubjectIndex: int | None = Field(default=None, ge=1, le=10)
    Name: str | None = None
    reply: str = Field(max_length=200)


def _call(prov, messages) -> dict:
    """One schema-constrained call on the raw chat model, returning llama.cpp's counters."""
    t0 = time.perf_counter()
    msg = prov.chat.invoke(to_langchain(messages), response_format=response_format(Proposal))
    wall = time.perf_counter() - t0
    parse_structured(msg.content, Proposal)  # the benchmark only counts valid answers
    perf = msg.response_metadata["perf"]
    usage = msg.usage_metadata
    return {"latency_s": wall, "prompt_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"],
            "evaluated": perf["n_p_eval"], "cached": usage["input_token_details"].get("cache_read", 0),
            "pp_tok_s": perf["n_p_eval"] / (perf["t_p_eval_ms"] / 1000) if perf["t_p_eval_ms"] else float("nan"),
            "gen_tok_s": perf["n_eval"] / (perf["t_eval_ms"] / 1000) if perf["t_eval_ms"] else float("nan")}


def _forget(llama) -> None:
    """Make the next call cold: drop the live context's tokens and every cached prefix state."""
    import llama_cpp

    llama.reset()
    llama.set_cache(llama_cpp.LlamaRAMCache(capacity_bytes=llama.cache.capacity_bytes))


def run(repeats: int) -> dict:
    """Run the three scenarios ``repeats`` times each; the medians per scenario."""
    llm = build_llm(get_settings(roles=Roles()))
    prov = llm.provider("executor")
    t0 = time.perf_counter()
    prov.model_ref.load()
    load_s = time.perf_counter() - t0
    llama = prov.model_ref._llama
    system = load_prompt("bench_llm_system").strip()
    questions = [q for q in load_prompt("bench_llm_questions").splitlines() if q.strip()]
    other = [("system", load_prompt("llm_ping_system").strip()), ("user", load_prompt("llm_ping_user").strip())]
    rows: dict[str, list[dict]] = {"cold": [], "warm": [], "alternate": []}
    for i in range(repeats):
        q = [questions[(3 * i + k) % len(questions)] for k in range(3)]
        with prov.model_ref.lock:
            _forget(llama)
        rows["cold"].append(_call(prov, [("system", system), ("user", q[0])]))
        rows["warm"].append(_call(prov, [("system", system), ("user", q[1])]))
        prov.chat.invoke(to_langchain(other))  # another role's prompt replaces the live context
        rows["alternate"].append(_call(prov, [("system", system), ("user", q[2])]))
    summary = {"model": str(prov.model_ref.path.name), "threads": prov.model_ref.n_threads,
               "load_s": round(load_s, 2), "repeats": repeats}
    for name, calls in rows.items():
        summary[name] = {key: round(statistics.median(c[key] for c in calls), 2) for key in calls[0]}
    return summary


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table (or JSON)."""
    ap = argparse.ArgumentParser(prog="python -m bench.llm", description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        summary = run(args.repeats)
    except LLMError as exc:
        print(f"benchmark needs the local model: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{summary['model']}  threads={summary['threads']}  load {summary['load_s']} s  "
          f"medians of {summary['repeats']}")
    print(f"{'scenario':<10} {'prompt tok':>10} {'evaluated':>9} {'cached':>6} {'pp tok/s':>8} "
          f"{'out tok':>7} {'gen tok/s':>9} {'latency s':>9}")
    for name in ("cold", "warm", "alternate"):
        r = summary[name]
        print(f"{name:<10} {r['prompt_tokens']:>10} {r['evaluated']:>9} {r['cached']:>6} {r['pp_tok_s']:>8} "
              f"{r['output_tokens']:>7} {r['gen_tok_s']:>9} {r['latency_s']:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
