"""The desk on real MariaDB over real HTTP: members claiming at once (exactly one wins), and the event
stream of one worker delivering what another worker wrote, resumed without loss or repeats while users
and staff write concurrently."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest
import sqlalchemy as sa

from chops import tables as t
from bench.handoff import EventReader
from chops.desk.log import events_after
from tests.unit.desk_support import desk_app, script_handoff, staff_headers
from tests.unit.web_support import LiveServer, http_json, make_app, user_token

pytestmark = pytest.mark.mariadb


def handed_over(url: str, llm, nickname: str = "demo_leader") -> tuple[str, dict]:
    script_handoff(llm)
    status, conv = http_json("POST", f"{url}/v1/conversations", {"token": user_token(nickname)})
    auth = {"Authorization": f"Bearer {conv['token']}"}
    status, body = http_json("POST", f"{url}/v1/conversations/{conv['id']}/messages",
                             {"text": "A person please"}, auth)
    assert status == 200 and body["route"] == "handoff", body
    return conv["id"], auth


def test_members_claiming_at_once_exactly_one_wins(mariadb_url):
    app, llm, engine = make_app(mariadb_url)
    members = [f"member{i}" for i in range(8)]
    desk_app(app, members)
    with LiveServer(app) as srv:
        for _ in range(3):
            cid, _ = handed_over(srv.url, llm)
            start = threading.Barrier(len(members))

            def claim(name: str):
                start.wait()
                return name, *http_json("POST", f"{srv.url}/v1/staff/conversations/{cid}/claim",
                                        headers=staff_headers(name))

            with ThreadPoolExecutor(len(members)) as pool:
                results = list(pool.map(claim, members))
            winners = [name for name, status, _ in results if status == 200]
            assert len(winners) == 1
            assert sorted(body["error"]["code"] for _, status, body in results if status != 200) == \
                ["already_claimed"] * (len(members) - 1)
            with engine.connect() as conn:
                row = conn.execute(sa.select(t.conversation_state)
                                   .where(t.conversation_state.c.conversation_id == cid)).mappings().one()
            assert (row["state"], row["staff"], row["changed_by"]) == ("staff", winners[0], winners[0])
            claims = [e for e in events_after(engine, cid) if e.kind == "state" and e.body["to"] == "staff"]
            assert [(e.actor, e.body["from"]) for e in claims] == [(winners[0], "waiting")]


def test_a_stream_on_one_worker_delivers_what_another_wrote_without_loss_or_repeats(mariadb_url):
    # Twenty user messages in a second to one conversation: the stream is under test, not the message limit.
    stream_app, llm, engine = make_app(mariadb_url, event_stream_s=2, event_poll_s=0.1,
                                       rate_limit_conversation="1000 per minute", rate_limit_user="1000 per minute")
    desk_app(stream_app)
    other_worker, _, _ = make_app(mariadb_url)  # its own services and hub, the same database
    staff_client = other_worker.test_client()
    with LiveServer(stream_app) as srv:
        cid, auth = handed_over(srv.url, llm)
        staff = staff_headers("erin")
        assert staff_client.post(f"/v1/staff/conversations/{cid}/claim", headers=staff).status_code == 200
        host, port = urlsplit(srv.url).hostname, urlsplit(srv.url).port
        path = f"/v1/conversations/{cid}/events"
        reader = EventReader(host, port, path, auth)
        for _ in range(3):  # the turn, waiting, staff
            reader.next()
        sent = time.perf_counter()
        staff_client.post(f"/v1/staff/conversations/{cid}/messages", json={"text": "Erin here"}, headers=staff)
        arrived, kind, data = reader.next()
        assert (kind, data["text"], data["display_name"]) == ("staff", "Erin here", "Erin")
        assert arrived - sent < 1.0  # found by the stream worker's poll of the event log

        def user(i):
            return http_json("POST", f"{srv.url}/v1/conversations/{cid}/messages", {"text": f"user {i}"}, auth)[0]

        def reply(i):
            return staff_client.post(f"/v1/staff/conversations/{cid}/messages", json={"text": f"staff {i}"},
                                     headers=staff).status_code

        seen = [data["id"]]
        with ThreadPoolExecutor(8) as pool:  # users and staff write at once while the stream runs and ends
            statuses = list(pool.map(user, range(20))) + list(pool.map(reply, range(20)))
        assert set(statuses) == {201, 202}
        deadline = time.monotonic() + 20
        while len(seen) < 41 and time.monotonic() < deadline:
            item = reader.next()
            if item is None:  # the stream's lifetime ended: reconnect from the last id, as the widget does
                reader.close()
                reader = EventReader(host, port, path, {**auth, "Last-Event-ID": str(seen[-1])})
                continue
            seen.append(item[2]["id"])
        reader.close()
    stored = [e.id for e in events_after(engine, cid)][3:]
    assert seen == stored and len(seen) == 41  # every event once, in the log's order
