"""A burst of users at once against the real local model, with and without admission control.

    python -m bench.burst [--users 8,24,50] [--modes admission,all-at-once] [--cphos-dir DIR]

The README's production command (``gunicorn -w 1 -k gthread --threads 16 'chops.web.app:create_app()'``)
serves the embedded local model on a fresh MariaDB database holding the CPHOS dump, on loopback, warm
(the bench waits for ``/readyz``). Per load ``N``, N distinct members each start a conversation and send
one message at the same moment — a profile question, every fourth one a change of their own upload limit
— and behave like the widget: a ``429 busy`` is answered once ``Retry-After`` has passed by resending with
the same ``Idempotency-Key``. Printed per mode and load: replies and ``busy`` refusals; the time until
every request had its first answer (a reply or a refusal) and until every one was replied to; p50/p95 of a
replied request's time (request to reply, queue included) and of the turn's run (the agent's time once
admitted, from the stored trace) against a lone user's median; 503s (model timeouts); and writes: per
write request, the audit rows of its member (must be exactly one: a resend never writes twice).

``admission`` is the service as configured (the queue on), ``admission:N`` the same with
``CHOPS_ADMISSION_CAPACITY=N``; ``all-at-once`` sets ``CHOPS_ADMISSION_ENABLED=0``: every turn runs at once,
as before the queue existed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from bench.load import SECRET, _request, served

ASK = "What is my upload limit?"


@dataclass
class Outcome:
    """What one user saw."""

    nickname: str
    writes: bool
    first_answer_s: float | None = None  # the first reply or refusal, from the burst's start
    replied_s: float | None = None  # the reply, from the burst's start
    turn_s: float | None = None  # the replied request's own time
    refusals: int = 0
    committed: bool = False
    error: str | None = None
    codes: list[int] = field(default_factory=list)


def members(url: str, n: int) -> list[str]:
    """``n`` approved members with a unique nickname, lowest ids first."""
    from apis.cphos import tables as t

    m = t.member
    dup = sa.select(m.c.nickname).group_by(m.c.nickname).having(sa.func.count() > 1)
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(m.c.nickname).where(m.c.status == 1, m.c.nickname.not_in(dup))
                            .order_by(m.c.id).limit(n)).scalars().all()
    engine.dispose()
    return list(rows)


def user(port: int, nickname: str, writes: bool, start: threading.Event, t0: list[float], out: Outcome) -> None:
    """One widget: start a conversation, wait for the burst, send one message, resend after busy."""
    from chops.web.tokens import sign_token

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    try:
        status, conv = _request(conn, "POST", "/v1/conversations", {"token": sign_token(nickname, SECRET, 3600)})
        if status != 201:
            out.error = f"start {status} {conv}"
            return
        text = f"Please change my upload limit to {40 + len(nickname) % 50}." if writes else ASK
        headers = {"Authorization": f"Bearer {conv['token']}", "Idempotency-Key": uuid.uuid4().hex}
        start.wait()
        while True:
            # A fresh connection per attempt, as a browser after a pause: gunicorn closes an idle keep-alive
            # connection after two seconds, and a resend waits longer than that.
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
            sent = time.perf_counter()
            conn.request("POST", f"/v1/conversations/{conv['id']}/messages", body=json.dumps({"text": text}),
                         headers={"Content-Type": "application/json", **headers})
            resp = conn.getresponse()
            body = json.loads(resp.read() or b"{}")
            now = time.perf_counter()
            out.codes.append(resp.status)
            if out.first_answer_s is None:
                out.first_answer_s = now - t0[0]
            if resp.status != 429:
                if resp.status == 200:
                    out.replied_s, out.turn_s = now - t0[0], now - sent
                    out.committed = bool(body.get("committed"))
                else:
                    out.error = f"message {resp.status}"
                return
            out.refusals += 1
            time.sleep(float(resp.getheader("Retry-After") or 5))
    except OSError as exc:
        out.error = f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()


def burst(port: int, nicknames: list[str]) -> list[Outcome]:
    """Everyone at the same moment; returns what each saw."""
    outs = [Outcome(nickname=n, writes=i % 4 == 3) for i, n in enumerate(nicknames)]
    start, t0 = threading.Event(), [0.0]
    threads = [threading.Thread(target=user, args=(port, o.nickname, o.writes, start, t0, o)) for o in outs]
    for th in threads:
        th.start()
    time.sleep(1.0)  # every conversation started: the burst is the messages
    t0[0] = time.perf_counter()
    start.set()
    for th in threads:
        th.join()
    return outs


def audit_rows(url: str, nicknames: list[str]) -> dict[str, int]:
    """Committed write audit rows per member."""
    from chops import tables as ct

    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(ct.audit_log.c.nickname, sa.func.count()).where(
            ct.audit_log.c.nickname.in_(nicknames), ct.audit_log.c.outcome.in_(("ok", "ok_noop")))
            .group_by(ct.audit_log.c.nickname)).all()
    engine.dispose()
    return {n: c for n, c in rows}


def run_times(url: str, nicknames: list[str]) -> list[float]:
    """The agent's own time of each stored turn of these members (from admission to reply)."""
    from chops import tables as ct

    engine = sa.create_engine(url)
    with engine.connect() as conn:
        traces = conn.execute(sa.select(ct.turn.c.trace_json).join(ct.conversation, ct.conversation.c.id ==
                                                                  ct.turn.c.conversation_id)
                              .where(ct.conversation.c.nickname.in_(nicknames))).scalars().all()
    engine.dispose()
    return sorted(json.loads(tr)["latency_s"] for tr in traces if tr)


def lone_user(port: int, nicknames: list[str]) -> float:
    """The median time of one profile question with nobody else asking (three users one after another)."""
    times = []
    for nickname in nicknames:
        out = Outcome(nickname=nickname, writes=False)
        ev = threading.Event()
        ev.set()
        t0 = [time.perf_counter()]
        user(port, nickname, False, ev, t0, out)
        if out.turn_s is not None:
            times.append(out.turn_s)
    return statistics.median(times) if times else float("nan")


def _p50_p95(values: list[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    p50 = statistics.median(values)
    return p50, (statistics.quantiles(values, n=20, method="inclusive")[18] if len(values) > 1 else p50)


def report(mode: str, n: int, outs: list[Outcome], lone_s: float, audits: dict[str, int], runs: list[float]) -> str:
    """One table row."""
    replied = [o for o in outs if o.replied_s is not None]
    p50, p95 = _p50_p95(sorted(o.turn_s for o in replied))
    run50, run95 = _p50_p95(runs)
    first = max((o.first_answer_s or float("inf")) for o in outs)
    last = max((o.replied_s or float("inf")) for o in outs)
    timeouts = sum(1 for o in outs if any(c == 503 for c in o.codes))
    writes = [o for o in outs if o.writes]
    # A write is right when it was committed exactly once if the reply says so, and not at all otherwise
    # (a refused or queued one): never twice, whatever was resent.
    wrong = [o.nickname for o in writes if audits.get(o.nickname, 0) != (1 if o.committed else 0)]
    return (f"| {mode} | {n} | {len(replied)} | {sum(o.refusals for o in outs)} | {first:.1f} | {last:.1f} | "
            f"{p50:.1f} | {p95:.1f} | {run50:.1f} | {run95:.1f} | {lone_s:.1f} | {run95 / lone_s:.2f} | "
            f"{p95 / lone_s:.2f} | {timeouts} | "
            f"{sum(o.committed for o in writes)} of {len(writes)} / {len(wrong)} |")


def main(argv: list[str] | None = None) -> None:
    """Load the dump, then per mode start the service, time a lone user and every burst."""
    from apis.cphos.loaders import load_cphos
    from chops.settings import get_settings

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", default="8,24,50")
    ap.add_argument("--modes", default="admission,all-at-once", help="admission, admission:N, all-at-once")
    ap.add_argument("--cphos-dir", type=Path, default=get_settings().cphos_dir)
    ap.add_argument("--mariadb", default="mysql+pymysql://root@127.0.0.1:3306")
    args = ap.parse_args(argv)
    loads = [int(n) for n in args.users.split(",")]
    rows = []
    for mode in args.modes.split(","):
        env = {"CHOPS_ADMISSION_ENABLED": "0" if mode == "all-at-once" else "1",
               "CHOPS_MAX_OPEN_CONVERSATIONS": "1000"}
        if mode.startswith("admission:"):  # admission:N = the queue with N turns on the model at once
            env["CHOPS_ADMISSION_CAPACITY"] = mode.split(":", 1)[1]
        with served(args.mariadb, 1, 16, env, app="chops.web.app:create_app()", ready_timeout_s=900,
                    seed=lambda engine: load_cphos(engine, args.cphos_dir / "database")) as (port, url, _):
            people = members(url, 3 + sum(loads))
            lone_s = lone_user(port, people[:3])
            used = 3
            for n in loads:
                group, used = people[used:used + n], used + n
                outs = burst(port, group)
                rows.append(report(mode, n, outs, lone_s, audit_rows(url, group), run_times(url, group)))
                print(rows[-1], flush=True)
                errors = [f"{o.nickname}: {o.error}" for o in outs if o.error]
                if errors:
                    print("    errors:", "; ".join(errors[:3]), flush=True)
    print("gunicorn -w 1 -k gthread --threads 16 'chops.web.app:create_app()', embedded local model, MariaDB, "
          "loopback")
    print("| mode | users | replied | busy refusals | all first answers (s) | all replied (s) | reply p50 (s) | "
          "reply p95 (s) | run p50 (s) | run p95 (s) | lone user (s) | run p95 / lone | reply p95 / lone | 503s | "
          "writes committed / wrong |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
