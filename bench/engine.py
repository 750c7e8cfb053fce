"""Engine builds side by side: how fast the embedded engine reads a prompt and writes tokens.

    python -m bench.engine [--vs-site DIR] [--repeats N] [--json]

Each measurement is a fresh process that starts the embedded engine (the installed ``xllamacpp``, or with
``--vs-site`` the one installed under DIR, e.g. ``pip install --target DIR --only-binary :all: xllamacpp==…``:
the portable binary wheel) on the configured 1.5B model and makes three kinds of call, each with a prompt no
cache holds: a long prompt and one generated token (prompt reading), a short prompt and 60 generated tokens
(writing), and a JSON-schema reply (the grammar on). The figures are llama.cpp's own timings of each call
(prompt tokens per second, generated tokens per second) and the wall time; the builds alternate, ``repeats``
times each, and the medians are printed with the ratio. Threads: ``CHOPS_LOCAL_THREADS`` (default 2).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WORDS = ("Team leaders upload the answer sheets of their students before the marking deadline, and markers "
         "grade each problem in the order the platform assigns. ")
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}, "source": {"type": "integer"}},
          "required": ["answer", "source"]}


def child(tag: str) -> dict:
    """Start the engine in this process, make the three calls, return their figures."""
    import httpx

    from chops.llm.factory import engine_for
    from chops.settings import get_settings

    import xllamacpp

    engine = engine_for(get_settings())
    t0 = time.perf_counter()
    engine.start()
    out = {"load_s": time.perf_counter() - t0, "system_info": xllamacpp.get_system_info().strip()}
    url, headers = engine.base_url + "/chat/completions", {"Authorization": f"Bearer {engine.api_key}"}

    def call(kind: str, prompt: str, max_tokens: int, schema: dict | None = None) -> None:
        body = {"messages": [{"role": "user", "content": f"({tag}) {prompt}"}], "max_tokens": max_tokens,
                "temperature": 0, "cache_prompt": False}
        if schema:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}
        t = time.perf_counter()
        timings = httpx.post(url, json=body, headers=headers, timeout=600).json().get("timings", {})
        out[kind] = {"wall_s": time.perf_counter() - t, "prompt_n": timings.get("prompt_n"),
                     "prompt_per_s": timings.get("prompt_per_second"), "gen_n": timings.get("predicted_n"),
                     "gen_per_s": timings.get("predicted_per_second")}

    call("read", WORDS * 12 + "Summarise in one word.", 1)
    call("write", "Count from 1 to 60, separated by commas.", 60)
    call("json", WORDS * 4 + "Answer in JSON: when are answer sheets uploaded? Quote the text.", 60, SCHEMA)
    engine.close()
    return out


def _run(site: str | None, tag: str) -> dict:
    env = dict(os.environ)
    if site:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [site, env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "bench.engine", "--child", tag], env=env, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise RuntimeError(f"engine run failed ({site or 'installed'}): {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Alternate the builds, print the medians (or JSON)."""
    ap = argparse.ArgumentParser(prog="python -m bench.engine", description=__doc__.splitlines()[0])
    ap.add_argument("--vs-site", default=None, help="a directory holding another xllamacpp build")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return 0
    builds = {"installed": None, **({"vs-site": args.vs_site} if args.vs_site else {})}
    runs: dict[str, list[dict]] = {name: [] for name in builds}
    for r in range(args.repeats):
        for name, site in builds.items():
            runs[name].append(_run(site, f"{name}-{r}-{time.time_ns()}"))
    figures = {name: {f"{kind}.{key}": statistics.median(run[kind][key] for run in rs)
                      for kind in ("read", "write", "json") for key in ("wall_s", "prompt_per_s", "gen_per_s")}
               for name, rs in runs.items()}
    info = {name: rs[0]["system_info"] for name, rs in runs.items()}
    if args.json:
        print(json.dumps({"figures": figures, "system_info": info, "repeats": args.repeats,
                          "load_average": os.getloadavg()}, indent=2))
        return 0
    print(f"threads={os.environ.get('CHOPS_LOCAL_THREADS', '2')}  medians of {args.repeats} runs each, alternating  "
          f"load average {[round(x, 1) for x in os.getloadavg()]}")
    for name, text in info.items():
        print(f"{name}: {text}")
    names = list(figures)
    print(f"{'figure':<22}" + "".join(f"{n:>12}" for n in names) + ("      ratio" if len(names) == 2 else ""))
    for key in figures[names[0]]:
        vals = [figures[n][key] for n in names]
        ratio = f"{vals[0] / vals[1]:>11.2f}" if len(vals) == 2 and vals[1] else ""
        print(f"{key:<22}" + "".join(f"{v:>12.2f}" for v in vals) + ratio)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
