"""Load benchmark of the web service under gunicorn with MariaDB and a zero-latency model.

    python -m bench.load [--concurrency 1,10,50] [--messages 20] [--think-ms 0] [--workers 2] [--threads 16]

A fresh MariaDB database (demo data) is created and dropped afterwards; gunicorn serves
``bench.load_app:create_bench_app()`` on 127.0.0.1 in a second process. For each concurrency ``c``,
``c`` conversations (one client thread and one keep-alive connection each) send ``--messages``
messages one after another (optionally pausing ``--think-ms`` between them, like a person) and stop.
Printed per level: messages/s over the level's wall time and the p50/p99 of one message's latency as
the client sees it. The model answers in microseconds, so this latency is the service's own overhead.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-secret-of-at-least-32-bytes-for-hs256"  # PyJWT warns below 32 bytes
NICKNAMES = ["demo_leader", "demo_busy_leader", "demo_vice", "demo_arbiter", "demo_admin"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(conn: http.client.HTTPConnection, method: str, path: str, body: dict | None = None,
             headers: dict | None = None) -> tuple[int, dict]:
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers={"Content-Type": "application/json", **(headers or {})})
    resp = conn.getresponse()
    return resp.status, json.loads(resp.read() or b"{}")


def _wait_ready(port: int, proc: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            if _request(conn, "GET", "/readyz")[0] == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not become ready in time")


def _conversation(port: int, index: int, messages: int, think_s: float, latencies: list[float],
                  errors: list[str]) -> None:
    """One user: start a conversation, send ``messages`` messages one by one, record each latency."""
    from chops.web.tokens import sign_token

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        nickname = NICKNAMES[index % len(NICKNAMES)]
        status, conv = _request(conn, "POST", "/v1/conversations", {"token": sign_token(nickname, SECRET, 3600)})
        if status != 201:
            errors.append(f"start {status} {conv}")
            return
        auth = {"Authorization": f"Bearer {conv['token']}"}
        for k in range(messages):
            t0 = time.perf_counter()
            status, body = _request(conn, "POST", f"/v1/conversations/{conv['id']}/messages",
                                    {"text": f"What is my upload limit? ({k})"}, auth)
            latencies.append(time.perf_counter() - t0)
            if status != 200 or not body.get("reply"):
                errors.append(f"message {status} {body}")
            if think_s:
                time.sleep(think_s)
    except OSError as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()


def run_concurrently(user, n: int) -> float:
    """Run ``user(i)`` for i in 0..n-1, each in its own thread, all at once; the wall time in seconds."""
    threads = [threading.Thread(target=user, args=(i,)) for i in range(n)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.perf_counter() - t0


def run_level(port: int, concurrency: int, messages: int, think_s: float) -> dict:
    """Run ``concurrency`` conversations at once; returns the level's figures."""
    latencies: list[float] = []
    errors: list[str] = []
    wall = run_concurrently(lambda i: _conversation(port, i, messages, think_s, latencies, errors), concurrency)
    q = statistics.quantiles(latencies, n=100, method="inclusive") if len(latencies) > 1 else latencies * 99
    return {"concurrency": concurrency, "messages": len(latencies), "errors": len(errors),
            "first_error": errors[0] if errors else None, "throughput_per_s": len(latencies) / wall,
            "p50_ms": statistics.median(latencies) * 1000, "p99_ms": q[98] * 1000}


# The zero-latency model has no capacity to protect and a handful of demo users send every message: the
# queue's first guess of a turn is its real length, and the per-user limits (made for people) are lifted.
SERVICE_ONLY_ENV = {"CHOPS_ADMISSION_CAPACITY": "16", "CHOPS_ADMISSION_TURN_S": "0.02",
                    "CHOPS_RATE_LIMIT_USER": "1000000 per minute",
                    "CHOPS_RATE_LIMIT_CONVERSATION": "1000000 per minute",
                    "CHOPS_RATE_LIMIT_GLOBAL": "1000000 per minute", "CHOPS_MAX_OPEN_CONVERSATIONS": "1000000"}


@contextmanager
def served(mariadb: str, workers: int = 2, threads: int = 16, env: dict[str, str] | None = None, *,
           app: str = "bench.load_app:create_bench_app()", seed=None,
           ready_timeout_s: float = 60) -> Iterator[tuple[int, str, subprocess.Popen]]:
    """A fresh MariaDB database with the demo data (or ``seed(engine)``'s) and gunicorn serving ``app``
    on it, on loopback (``env``: more ``CHOPS_*`` settings, over ``SERVICE_ONLY_ENV`` for the bench
    app); yields ``(port, database url, gunicorn process)``; stops gunicorn and drops the database."""
    from apis.cphos.db import init_schema
    from apis.cphos.loaders import seed_demo
    from chops.db import make_engine

    name = f"chops_bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(mariadb)
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"))
    url = f"{mariadb}/{name}?charset=utf8mb4"
    proc = None
    try:
        engine = make_engine(url)
        init_schema(engine)
        (seed or seed_demo)(engine)
        engine.dispose()
        port = _free_port()
        env = {**os.environ, **(SERVICE_ONLY_ENV if app.startswith("bench.load_app") else {}),
               "CHOPS_DATABASE_URL": url, "CHOPS_SECRET_KEY": SECRET, "CHOPS_DEMO_MODE": "0", **(env or {})}
        proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-w", str(workers), "-k", "gthread", "--threads",
             str(threads), "-b", f"127.0.0.1:{port}", "--log-level", "warning", app], cwd=ROOT, env=env)
        _wait_ready(port, proc, ready_timeout_s)
        yield port, url, proc
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a request that outlives gunicorn's graceful timeout
                proc.kill()
                proc.wait(timeout=30)
        admin.dispose()
        with sa.create_engine(mariadb).connect() as conn:  # a fresh pool: the server may have restarted
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS `{name}`"))


def main(argv: list[str] | None = None) -> None:
    """Create the database, start gunicorn, run every level, print the table, clean up."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--concurrency", default="1,10,50", help="comma-separated levels")
    ap.add_argument("--messages", type=int, default=20, help="messages per conversation")
    ap.add_argument("--think-ms", type=float, default=0.0, help="pause between a user's messages")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--mariadb", default="mysql+pymysql://root@127.0.0.1:3306", help="server URL (no database)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)

    with served(args.mariadb, args.workers, args.threads) as (port, _url, _proc):
        run_level(port, 2, 5, 0.0)  # warm-up: connection pools, first queries
        results = [run_level(port, int(c), args.messages, args.think_ms / 1000)
                   for c in args.concurrency.split(",")]
    if args.json:
        print(json.dumps(results, indent=1))
        return
    print(f"gunicorn -w {args.workers} -k gthread --threads {args.threads}, MariaDB, zero-latency model, "
          f"{args.messages} messages per conversation, think time {args.think_ms:g} ms")
    print(f"{'conversations':>13} {'messages':>8} {'errors':>6} {'msg/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for r in results:
        print(f"{r['concurrency']:>13} {r['messages']:>8} {r['errors']:>6} {r['throughput_per_s']:>8.1f} "
              f"{r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f}")
        if r["first_error"]:
            print(f"    first error: {r['first_error']}")


if __name__ == "__main__":
    main()
