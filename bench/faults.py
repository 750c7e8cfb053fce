"""Fault and load suite: real gunicorn, real MariaDB, the zero-latency bench model, loopback only.

    python -m bench.faults [--conversations 50] [--turns 20] [--memory-turns 2000] [--skip-db-restart]

Checks, each a row of the printed table (the command exits 1 when any row fails):
  load         N conversations x M turns at once: 0 errors, 0 cross-talk (every reply names its own
               user and repeats its own message's tag), p50/p99 of the service's overhead
  idempotency  one idempotency key from 20 threads on MariaDB: exactly one write
  model down   the model times out / is unreachable mid-turn: 503 model_unavailable, nothing written
  db restart   MariaDB shut down while a write turn waits for its verifier: 503 database_unavailable,
               nothing written; after MariaDB is back, the same workers answer again (no restart)
  memory       K more turns: RSS of the gunicorn workers before, halfway and after (flat: the second
               half grows it by < 10 MB; the first pays for the threads' allocator arenas)
MariaDB is always started again (in a ``finally``) if this suite stopped it.
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import sqlalchemy as sa

from bench.load import NICKNAMES, SECRET, _request, run_concurrently, served

MEMORY_GROWTH_LIMIT_MB = 10.0  # over the second half of the memory turns


class Client:
    """One user's keep-alive connection and conversation."""

    def __init__(self, port: int, nickname: str):
        from chops.web.tokens import sign_token

        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.nickname = nickname
        status, conv = _request(self.conn, "POST", "/v1/conversations", {"token": sign_token(nickname, SECRET, 3600)})
        if status != 201:
            raise RuntimeError(f"start {status} {conv}")
        self.cid, self.auth = conv["id"], {"Authorization": f"Bearer {conv['token']}"}

    def send(self, text: str) -> tuple[int, dict]:
        """POST one message; (status, body)."""
        return _request(self.conn, "POST", f"/v1/conversations/{self.cid}/messages", {"text": text}, self.auth)

    def turns(self) -> list[dict]:
        """The stored turns of the conversation."""
        return _request(self.conn, "GET", f"/v1/conversations/{self.cid}", None, self.auth)[1].get("turns", [])


def check_load(port: int, conversations: int, turns: int) -> dict:
    """``conversations`` users at once, ``turns`` messages each; errors, cross-talk, latency."""
    latencies: list[float] = []
    errors: list[str] = []
    crosstalk: list[str] = []

    def user(i: int) -> None:
        try:
            c = Client(port, NICKNAMES[i % len(NICKNAMES)])
            for k in range(turns):
                tag = f"[c:{i}:{k}]"
                t0 = time.perf_counter()
                status, body = c.send(f"What is my upload limit? {tag}")
                latencies.append(time.perf_counter() - t0)
                if status != 200:
                    errors.append(f"{status} {body}")
                elif body.get("reply") != f"{c.nickname} {tag}":
                    crosstalk.append(f"{c.nickname} {tag} got {body.get('reply')!r}")
        except (OSError, RuntimeError) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")

    wall = run_concurrently(user, conversations)
    q = statistics.quantiles(latencies, n=100, method="inclusive") if len(latencies) > 1 else [0.0] * 99
    lost = conversations * turns - len(latencies)
    ok = not errors and not crosstalk and not lost
    return {"check": f"load {conversations}x{turns}", "ok": ok,
            "detail": f"{len(latencies)} turns, {len(errors)} errors, {len(crosstalk)} cross-talk, "
                      f"p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {q[98] * 1000:.1f} ms, "
                      f"{len(latencies) / wall:.0f} turns/s",
            "first_problem": (errors + crosstalk)[:1]}


def check_idempotency(url: str, threads: int = 20) -> dict:
    """The same idempotency key from ``threads`` threads at once: exactly one audited write."""
    from apis.cphos import tables as t
    from apis.cphos.service import Api
    from chops import tables as ct
    from chops.db import make_engine

    engine = make_engine(url)
    api, key, results, errors = Api(engine), "faults-same-key", [], []
    barrier = threading.Barrier(threads)

    def go() -> None:
        barrier.wait()
        try:
            results.append(api.call("ChangeAllTypesUploadLimit", "demo_vice", {"Limit": 37}, idempotency_key=key))
        except Exception as exc:  # noqa: BLE001 - counted and shown
            errors.append(f"{type(exc).__name__}: {exc}")

    ths = [threading.Thread(target=go) for _ in range(threads)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    with engine.connect() as conn:
        audits = conn.execute(sa.select(sa.func.count()).select_from(ct.audit_log)
                              .where(ct.audit_log.c.idempotency_key == key)).scalar()
        limit = conn.execute(sa.select(t.member.c.limit).where(t.member.c.nickname == "demo_vice")).scalar()
    engine.dispose()
    committed = sum(1 for r in results if r.committed and not r.replayed)  # a replay reports committed too
    return {"check": f"idempotency x{threads}", "ok": audits == 1 and committed == 1 and limit == 37,
            "detail": f"{audits} audited write(s), {committed} committed, "
                      f"{sum(1 for r in results if r.replayed)} replayed, {len(errors)} errors, limit now {limit}",
            "first_problem": errors[:1]}


def _limit(url: str, nickname: str) -> int:
    from apis.cphos import tables as t

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.select(t.member.c.limit).where(t.member.c.nickname == nickname)).scalar()
    finally:
        engine.dispose()


def check_model_down(port: int, url: str) -> dict:
    """A write turn whose verifier times out, then one whose model is unreachable: 503, nothing written."""
    rows = []
    for fault in ("timeout", "killed"):
        c = Client(port, "demo_arbiter")
        before = _limit(url, "demo_arbiter")
        status, body = c.send(f"Set my upload limit to 41 [write 41 {fault}]")
        code = body.get("error", {}).get("code")
        clean = _limit(url, "demo_arbiter") == before and c.turns() == []
        rows.append((fault, status, code, clean))
    ok = all(s == 503 and code == "model_unavailable" and clean for _, s, code, clean in rows)
    return {"check": "model timeout / killed", "ok": ok,
            "detail": "; ".join(f"{f}: {s} {code}, {'nothing written' if clean else 'WRITTEN'}"
                                for f, s, code, clean in rows), "first_problem": []}


def _mysqladmin(*args: str) -> bool:
    return subprocess.run(["mysqladmin", "-uroot", *args], capture_output=True, timeout=30).returncode == 0


def start_mariadb(timeout_s: float = 60) -> bool:
    """Start MariaDB if it is down and wait until it answers a ping."""
    if _mysqladmin("ping"):
        return True
    subprocess.run(["start-stop-daemon", "--start", "--oknodo", "--background", "--exec", "/usr/sbin/mariadbd"],
                   check=False, timeout=30)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if _mysqladmin("ping"):
            return True
        time.sleep(0.5)
    return False


def check_db_restart(port: int, url: str) -> dict:
    """Shut MariaDB down while a write turn waits for its verifier; then bring it back."""
    c = Client(port, "demo_busy_leader")
    before = _limit(url, "demo_busy_leader")
    answer: dict = {}
    th = threading.Thread(target=lambda: answer.update(zip(("status", "body"), c.send(
        "Set my upload limit to 42 [write 42 slow=2]"))))
    t_down = time.perf_counter()
    try:
        th.start()
        time.sleep(0.7)  # the turn has loaded its history and profile and is in the verifier
        _mysqladmin("shutdown")
        th.join(timeout=60)
        fresh = Client.__new__(Client)  # a request while the database is down: the same conversation
        fresh.conn, fresh.cid, fresh.auth = http.client.HTTPConnection("127.0.0.1", port, timeout=30), c.cid, c.auth
        down_status, down_body = fresh.send("What is my upload limit? [c:down]")
    finally:
        up = start_mariadb()
    recovered_after = None
    for attempt in range(1, 21):  # the same gunicorn workers, no restart
        status, body = c.send(f"What is my upload limit? [c:up{attempt}]")
        if status == 200:
            recovered_after = attempt
            break
        time.sleep(0.5)
    outage_s = time.perf_counter() - t_down
    mid = (answer.get("status"), (answer.get("body") or {}).get("error", {}).get("code"))
    down = (down_status, down_body.get("error", {}).get("code"))
    stored = [t["user_text"] for t in c.turns()] if recovered_after else []
    clean = _limit(url, "demo_busy_leader") == before and not any("[write 42" in s for s in stored)
    ok = (up and mid == (503, "database_unavailable") and down == (503, "database_unavailable") and clean
          and recovered_after is not None)
    return {"check": "MariaDB down mid-turn", "ok": ok,
            "detail": f"mid-turn {mid[0]} {mid[1]}; while down {down[0]} {down[1]}; "
                      f"{'nothing written' if clean else 'PARTIAL WRITE'}; "
                      f"recovered on try {recovered_after} ({outage_s:.1f} s from shutdown)",
            "first_problem": []}


def _rss_mb(proc: subprocess.Popen) -> float:
    """Resident memory of gunicorn's workers (the master's children), in MB."""
    total = 0
    for child in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split():
        for line in Path(f"/proc/{child}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def check_memory(port: int, proc: subprocess.Popen, turns: int) -> dict:
    """``turns`` more turns in two halves (20 conversations at once); worker RSS before, between and
    after. Flat: the second half grows RSS by less than the limit (the first pays for thread arenas)."""
    rss = [_rss_mb(proc)]
    halves = []
    for _ in range(2):
        halves.append(check_load(port, 20, max(1, turns // 40)))
        rss.append(_rss_mb(proc))
    ok = all(h["ok"] for h in halves) and rss[2] - rss[1] < MEMORY_GROWTH_LIMIT_MB
    return {"check": f"memory {turns} turns", "ok": ok,
            "detail": f"RSS {rss[0]:.0f} -> {rss[1]:.0f} -> {rss[2]:.0f} MB (second half {rss[2] - rss[1]:+.1f} MB); "
                      + "; ".join(h["detail"].split(", p50")[0] for h in halves),
            "first_problem": [p for h in halves for p in h["first_problem"]][:1]}


def main(argv: list[str] | None = None) -> int:
    """Run every check against one served instance; print the table; 1 when any check failed."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conversations", type=int, default=50)
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--memory-turns", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--skip-db-restart", action="store_true", help="do not stop MariaDB (shared machines)")
    ap.add_argument("--mariadb", default="mysql+pymysql://root@127.0.0.1:3306", help="server URL (no database)")
    args = ap.parse_args(argv)
    rows = []
    t0 = time.perf_counter()
    try:
        with served(args.mariadb, args.workers, args.threads) as (port, url, proc):
            check_load(port, 2, 5)  # warm-up: pools, first queries, imports
            rows.append(check_load(port, args.conversations, args.turns))
            rows.append(check_idempotency(url))
            rows.append(check_model_down(port, url))
            if not args.skip_db_restart:
                rows.append(check_db_restart(port, url))
            rows.append(check_memory(port, proc, args.memory_turns))
    finally:
        start_mariadb()  # whatever happened above, other people's tests need it
    print(f"bench.faults: gunicorn -w {args.workers} -k gthread --threads {args.threads}, MariaDB, "
          f"zero-latency model, loopback; {time.perf_counter() - t0:.0f} s")
    width = max(len(r["check"]) for r in rows)
    print(f"{'check':<{width}}  result  detail")
    for r in rows:
        print(f"{r['check']:<{width}}  {'ok' if r['ok'] else 'FAIL':<6}  {r['detail']}")
        for problem in r["first_problem"]:
            print(f"{'':<{width}}          first problem: {problem}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
