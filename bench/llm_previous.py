"""The former engine for ``python -m bench.llm --previous-python PY``: llama-cpp-python, as the project
used it before the server engine (one context behind a lock, a RAM prefix cache, ``json_object`` +
schema grammar). Runs in an interpreter that has ``llama_cpp``; reads the job as JSON on stdin and
prints the per-request medians as one JSON line. Needs nothing from this repository."""

from __future__ import annotations

import json
import statistics
import sys
import time


def main() -> None:
    """Replay the job's requests ``repeats`` times after one warm-up round."""
    import llama_cpp

    job = json.load(sys.stdin)
    llama = llama_cpp.Llama(model_path=job["model"], n_ctx=4096, n_threads=job["threads"],
                            n_threads_batch=job["threads"], verbose=False)
    llama.set_cache(llama_cpp.LlamaRAMCache(capacity_bytes=3 << 30))
    rounds: dict[str, list[dict]] = {kind: [] for kind in job["requests"]}
    for rnd in range(job["repeats"] + 1):
        for kind, calls in job["requests"].items():
            fig: dict = {"calls": len(calls), "first_piece_s": 0.0}
            t0 = time.perf_counter()
            for call in calls:
                fmt = call["response_format"]["json_schema"]["schema"]
                llama_cpp.llama_perf_context_reset(llama._ctx.ctx)
                resp = llama.create_chat_completion(  # the same round marks as bench.llm's fresh()
                    messages=[{"role": r, "content": f"(round p{rnd}) {c}" if r == "user" else c}
                              for r, c in call["messages"]],
                    response_format={"type": "json_object", "schema": fmt}, temperature=0.0,
                    max_tokens=call["max_tokens"])
                perf = llama_cpp.llama_perf_context(llama._ctx.ctx)
                role = call["role"]
                fig[f"{role}_eval"] = fig.get(f"{role}_eval", 0) + perf.n_p_eval
                fig[f"{role}_gen"] = fig.get(f"{role}_gen", 0) + resp["usage"]["completion_tokens"]
            fig["latency_s"] = time.perf_counter() - t0
            if rnd:
                rounds[kind].append(fig)
    print(json.dumps({kind: {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}
                      for kind, rows in rounds.items()}))


if __name__ == "__main__":
    main()
