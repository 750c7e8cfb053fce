"""Staff carry out an operation for a user on real MariaDB: the dry run writes nothing, and a commit
submitted several times at once (a double click, a retried request) writes once, naming the staff member."""

from __future__ import annotations

import re
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa

from chops import tables as t
from tests.unit.pipeline_support import member
from tests.unit.web_support import STAFF_KEY, STAFF_PASSWORD, LiveServer, add_staff, make_app

pytestmark = pytest.mark.mariadb
URL = "/console/operations/ChangeAllTypesSchool"


def post(base: str, data: dict, headers: dict) -> str:
    req = urllib.request.Request(base + URL, data=urllib.parse.urlencode(data).encode(), method="POST",
                                 headers=headers)
    with urllib.request.urlopen(req, timeout=60) as resp:
        return resp.read().decode()


def test_dry_run_then_a_concurrent_double_commit_writes_once(mariadb_url):
    app, _, engine = make_app(mariadb_url)
    add_staff(app, "sam", "Sam Staff")
    client = app.test_client()
    client.post("/console/login", data={"name": "sam", "password": STAFF_PASSWORD})
    shown = client.get(URL).get_data(as_text=True)
    hidden = {n: re.search(rf'name="{n}" value="([^"]*)"', shown).group(1) for n in ("csrf", "key")}
    fields = {"user": "demo_leader", "arg.SchoolName": "Lakeside Academy"}
    before = member(engine, "demo_leader")["school_id"]

    dry = client.post(URL, data={**hidden, **fields, "action": "preview"}).get_data(as_text=True)
    assert 'data-outcome="ok"' in dry and f"<td>school_id</td><td>{before}</td>" in dry
    assert member(engine, "demo_leader")["school_id"] == before

    headers = {"X-Staff-Key": STAFF_KEY, "X-Staff-Name": "sam"}
    with LiveServer(app) as srv, ThreadPoolExecutor(max_workers=6) as pool:
        pages = list(pool.map(lambda _: post(srv.url, {**fields, "key": hidden["key"], "action": "commit"}, headers),
                              range(6)))
    assert all('data-outcome="ok"' in p and "Committed" in p for p in pages)
    assert sum("already committed" in p for p in pages) == 5
    after = member(engine, "demo_leader")["school_id"]
    assert after != before
    with engine.connect() as conn:
        rows = conn.execute(sa.select(t.audit_log.c.nickname, t.audit_log.c.idempotency_key, t.audit_actor.c.actor)
                            .join(t.audit_actor, t.audit_actor.c.audit_id == t.audit_log.c.id)).all()
        assert conn.execute(sa.select(sa.func.count()).select_from(t.audit_log)).scalar() == 1
    assert [tuple(r) for r in rows] == [("demo_leader", hidden["key"], "sam")]
