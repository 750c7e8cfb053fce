"""Hand-off benchmark: from a staff reply (the staff API's POST) to its arrival on the user's event
stream, under gunicorn with MariaDB on loopback.

    python -m bench.handoff [--replies 20] [--workers 1,2] [--threads 16] [--no-browser]

For each worker count: a fresh database and gunicorn (``bench.load.served``); one conversation is
handed to a person (its state set to waiting through ``chops.desk``, as the hand-off route does),
claimed through the staff API, and a client reads ``GET /v1/conversations/<id>/events`` on its own
connection (as the widget does) while staff post ``--replies`` replies, one at a time, each after the
previous one arrived. Then the same in the real widget (headless Chromium, ``/widget``): the user asks
for a person in the widget (the bench model's hand-off route), staff claim and reply, and each reply
is timed from its POST to its display in the widget's DOM. Printed: the median and p90 of both.
With one worker the
reply wakes the stream in-process; with two, the POST and the stream may be served by different
workers and the reply is found by the other worker's poll of the event log (``CHOPS_EVENT_POLL_S``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import queue
import statistics
import threading
import time

STAFF_KEY = "bench-staff-key"
STAFF_NAME = "bench"  # a named staff account (X-Staff-Name must be one)


class EventReader:
    """Reads a Server-Sent Events response on its own thread; ``events`` yields (arrival time, kind, data)."""

    def __init__(self, host: str, port: int, path: str, headers: dict[str, str]) -> None:
        self.conn = http.client.HTTPConnection(host, port, timeout=60)
        self.conn.request("GET", path, headers={"Accept": "text/event-stream", **headers})
        self.response = self.conn.getresponse()
        if self.response.status != 200:
            raise RuntimeError(f"event stream: {self.response.status} {self.response.read()[:200]!r}")
        self.events: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        kind, data = None, ""
        try:
            for raw in self.response:
                line = raw.decode("utf-8").rstrip("\n")
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    data += line[5:].strip()
                elif not line and kind:
                    self.events.put((time.perf_counter(), kind, json.loads(data)))
                    kind, data = None, ""
        except (OSError, ValueError, AttributeError):  # AttributeError: http.client after close()
            pass
        self.events.put(None)  # the stream ended

    def next(self, timeout: float = 10.0):
        """The next event (arrival, kind, data), or None when the stream ended."""
        return self.events.get(timeout=timeout)

    def close(self) -> None:
        """Drop the connection."""
        self.conn.close()


def _call(port: int, method: str, path: str, body: dict | None = None, headers: dict | None = None) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=json.dumps(body) if body is not None else None,
                     headers={"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        data = json.loads(resp.read() or b"{}")
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: {resp.status} {data}")
        return data
    finally:
        conn.close()


def _add_staff(url: str) -> None:
    import secrets

    from chops.db import make_engine
    from chops.staff_accounts import StaffAccounts

    engine = make_engine(url)
    try:
        StaffAccounts(engine).add(STAFF_NAME, secrets.token_urlsafe(24), "Bench Staff")
    finally:
        engine.dispose()


def _to_waiting(url: str, conversation_id: str, nickname: str) -> None:
    from chops.db import make_engine
    from chops.desk import Desk
    from chops.desk.log import lock_conversation

    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            lock_conversation(conn, conversation_id)
            Desk(engine).request_person(conn, conversation_id, nickname)
    finally:
        engine.dispose()


def run(port: int, url: str, replies: int) -> list[float]:
    """One handed-over conversation, ``replies`` staff replies; each one's seconds to the stream."""
    from bench.load import SECRET
    from chops.web.tokens import sign_token

    conv = _call(port, "POST", "/v1/conversations", {"token": sign_token("demo_leader", SECRET, 3600)})
    cid, auth = conv["id"], {"Authorization": f"Bearer {conv['token']}"}
    _to_waiting(url, cid, "demo_leader")
    staff = {"X-Staff-Key": STAFF_KEY, "X-Staff-Name": STAFF_NAME}
    _call(port, "POST", f"/v1/staff/conversations/{cid}/claim", headers=staff)
    reader, last, seconds = None, None, []
    try:
        for k in range(replies):
            if reader is None:  # (re)connect after the stream's lifetime, as the widget does
                reader = EventReader("127.0.0.1", port, f"/v1/conversations/{cid}/events",
                                     {**auth, **({"Last-Event-ID": str(last)} if last else {})})
            text = f"staff reply {k}"
            sent = time.perf_counter()
            _call(port, "POST", f"/v1/staff/conversations/{cid}/messages", {"text": text}, staff)
            while True:
                item = reader.next()
                if item is None:  # the stream's lifetime is over: resume after the last event seen
                    reader.close()
                    reader = EventReader("127.0.0.1", port, f"/v1/conversations/{cid}/events",
                                         {**auth, "Last-Event-ID": str(last)})
                    continue
                arrived, kind, data = item
                last = data["id"]
                if kind == "staff" and data["text"] == text:
                    seconds.append(arrived - sent)
                    break
    finally:
        if reader is not None:
            reader.close()
    return seconds


CHROMIUM = "/usr/bin/chromium"


def run_browser(port: int, replies: int) -> list[float]:
    """The user in the real widget asks for a person; staff claim and send ``replies`` replies; each
    one's seconds from the staff POST to its bubble in the widget."""
    from playwright.sync_api import sync_playwright

    from bench.load import SECRET
    from chops.web.tokens import sign_token

    staff = {"X-Staff-Key": STAFF_KEY, "X-Staff-Name": STAFF_NAME}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/widget?token={sign_token('demo_leader', SECRET, 3600)}")
            page.locator(".chops-launcher").click()
            page.fill(".chops-input", "[person] I would like to talk to someone")
            page.keyboard.press("Enter")
            page.locator(".chops-status").filter(has_text="a person will reply here").wait_for()
            cid = page.locator(".chops-widget").get_attribute("data-conversation-id")
            _call(port, "POST", f"/v1/staff/conversations/{cid}/claim", headers=staff)
            seconds = []
            for k in range(replies):
                sent = time.perf_counter()
                _call(port, "POST", f"/v1/staff/conversations/{cid}/messages", {"text": f"staff reply {k}"}, staff)
                page.wait_for_function("n => document.querySelectorAll('.chops-person').length > n", arg=k,
                                       polling=5, timeout=30_000)
                seconds.append(time.perf_counter() - sent)
            return seconds
        finally:
            browser.close()


def _figures(seconds: list[float]) -> str:
    q = statistics.quantiles(seconds, n=10, method="inclusive")
    return f"{statistics.median(seconds) * 1000:>9.1f} {q[8] * 1000:>7.1f} {max(seconds) * 1000:>7.1f}"


def main(argv: list[str] | None = None) -> None:
    """Run each worker count and print median and p90 per count."""
    from bench.load import served
    from chops.settings import get_settings

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replies", type=int, default=20)
    ap.add_argument("--workers", default="1,2", help="comma-separated gunicorn worker counts")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--mariadb", default="mysql+pymysql://root@127.0.0.1:3306", help="server URL (no database)")
    ap.add_argument("--no-browser", action="store_true", help="only the event stream, not the widget")
    args = ap.parse_args(argv)
    env = {"CHOPS_STAFF_API_KEY": STAFF_KEY}
    print(f"staff reply (POST) → the user's event stream / the widget's display, {args.replies} replies, "
          f"gunicorn -k gthread --threads {args.threads}, MariaDB, loopback, CHOPS_EVENT_POLL_S="
          f"{get_settings().event_poll_s:g}")
    print(f"{'workers':>7} {'to':<7} {'median ms':>9} {'p90 ms':>7} {'max ms':>7}")
    for workers in (int(w) for w in args.workers.split(",")):
        with served(args.mariadb, workers, args.threads, env=env) as (port, url, _proc):
            _add_staff(url)
            run(port, url, 3)  # warm-up: pools, first queries
            print(f"{workers:>7} {'stream':<7} {_figures(run(port, url, args.replies))}")
            if not args.no_browser:
                print(f"{workers:>7} {'widget':<7} {_figures(run_browser(port, args.replies))}")


if __name__ == "__main__":
    main()
