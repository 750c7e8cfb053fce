"""``Api.members_named`` and the target check on SQLite and real MariaDB: the same members found on
both, although MariaDB's collation compares user names without case (the check filters by its own
rules), many candidate names in chunks, and the in-memory fake agreeing with the SQL repository."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from apis.cphos import tables as t
from apis.cphos.demo import T0, demo_rows
from tests.fakes import FakeState
from apis.cphos.service import Api
from chops.pipeline.context import TurnContext
from chops.pipeline.targets import others_named
from chops.pipeline.trace import Trace

EXTRA = [(20, "bob_b", "Bob Brown"), (21, "芳芳", "王芳"), (26, "Will", "Will Smith")]


@pytest.fixture
def api(engine):
    rows = [{"id": i, "p_id": 0, "user_name": name, "school_id": 1, "subject": 1, "status": 1, "type": 1,
             "limit": 10, "create_time": T0, "nickname": nick} for i, nick, name in EXTRA]
    with engine.begin() as conn:
        conn.execute(sa.insert(t.member), rows)
    return Api(engine)


def _ids(rows):
    return [r["id"] for r in rows]


def test_members_are_found_by_nickname_or_real_name(api):
    assert _ids(api.members_named(["Bob Brown", "芳芳", "demo_vice", "Nobody"])) == [4, 20, 21]
    assert api.members_named(["王芳"]) == [{"id": 21, "nickname": "芳芳", "user_name": "王芳"}]
    assert api.members_named([]) == []


def test_many_candidates_are_looked_up_in_chunks(api):
    names = [f"name{i}" for i in range(1500)] + ["Lena Leader", "bob_b", "Olga Other"]
    assert _ids(api.members_named(names)) == [2, 8, 20]


def test_the_fake_repository_agrees_with_the_sql_one(api):
    members = demo_rows()[t.member] + [{"id": i, "nickname": n, "user_name": u, "status": 1} for i, n, u in EXTRA]
    fake = Api(None, uow_factory=FakeState(members=members).uow)
    names = ["Bob Brown", "芳芳", "demo_vice", "Will", "Nobody", "Lena Leader"]
    assert fake.members_named(names) == api.members_named(names)


@pytest.mark.parametrize(("text", "found"), [
    ("please set the upload limit of bob brown to 40", ["bob brown"]),
    ("把王芳的上传上限改成40", ["王芳"]),
    ("I will need my upload limit at 40", []),  # MariaDB returns "Will" for "will"; the check does not
])
def test_the_check_is_the_same_on_every_backend(api, text, found):
    ctx = TurnContext(nickname="demo_leader", text=text, profile=api.profile("demo_leader"), history=[],
                      trace=Trace())
    assert others_named(api, ctx, {"Limit": 40}) == found
