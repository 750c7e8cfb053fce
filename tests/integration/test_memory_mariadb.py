"""The solution memory on real MariaDB: a verified write through the service is remembered, recalled
for a similar request, listed in the console and deleted there (then never shown again)."""

from __future__ import annotations

import re

import pytest

from chops.memory import SolutionMemory
from chops.records import Solution
from tests.unit.pipeline_support import WordsEmbedder
from tests.unit.web_support import STAFF_PASSWORD, add_staff, make_app, script_passed_write, start

pytestmark = pytest.mark.mariadb


def test_memory_table_round_trip_on_mariadb(mariadb_url):
    from apis.cphos.db import init_schema
    from chops.db import make_engine

    engine = make_engine(mariadb_url)
    init_schema(engine)
    memory = SolutionMemory(engine, WordsEmbedder(), k=3, floor=0.5)
    sid = memory.remember(Solution(request="把我的上传上限改成 40 please", route="system",
                                   operation="ChangeAllTypesUploadLimit", args={"Limit": 40}))
    assert memory.remember(Solution(request="把我的上传上限改成 40 please", route="system",
                                    operation="ChangeAllTypesUploadLimit", args={"Limit": 40})) is None
    fresh = SolutionMemory(engine, WordsEmbedder(), k=3, floor=0.5)  # another worker: builds its index from the table
    [got] = fresh.recall("把我的上传上限改成 40 please")
    assert (got.id, got.args, got.request) == (sid, {"Limit": 40}, "把我的上传上限改成 40 please")
    assert memory.delete(sid, staff="Sam") and fresh.recall("把我的上传上限改成 40 please") == []
    engine.dispose()


def test_the_console_lists_the_memory_and_deletes_an_entry(mariadb_url):
    app, llm, engine = make_app(mariadb_url, memory_enabled=True)
    client = app.test_client()
    cid, auth = start(client)
    script_passed_write(llm, 40)
    body = client.post(f"/v1/conversations/{cid}/messages", json={"text": "Set my upload limit to 40"},
                       headers=auth).get_json()
    assert body["committed"]
    add_staff(app, "sam", "Sam Staff")
    assert client.post("/console/login", data={"name": "sam", "password": STAFF_PASSWORD}).status_code == 302
    page = client.get("/console/memory").get_data(as_text=True)
    assert "Set my upload limit to 40" in page and "ChangeAllTypesUploadLimit" in page
    sid = int(re.search(r'id="solution-(\d+)"', page).group(1))
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    resp = client.post(f"/console/memory/{sid}/delete", data={"csrf": token})
    assert resp.status_code == 302
    assert 'id="solution-' not in client.get("/console/memory").get_data(as_text=True)
    deleted = client.get("/console/memory?status=deleted").get_data(as_text=True)
    assert f'id="solution-{sid}"' in deleted and "sam" in deleted
    # The next similar request is not shown the deleted solution.
    script_passed_write(llm, 45)
    client.post(f"/v1/conversations/{cid}/messages", json={"text": "Set my upload limit to 45"}, headers=auth)
    assert all("handled correctly before" not in m[1][1] for role, m, _ in llm.calls if role == "classifier")
    assert client.post(f"/console/memory/{sid}/delete", data={"csrf": token}).status_code == 302  # flashed, no crash
    engine.dispose()
