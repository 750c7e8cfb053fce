"""The conversation service and the chat API on real MariaDB (scripted model): turns stored, a
write without a verifier queued against the real conversation row, the real driver's outage a 503."""

from __future__ import annotations

import pytest

from apis.db import make_engine
from chops.conversation import ConversationService
from chops.llm import LLMError, ScriptedLLM
from chops.settings import get_settings
from chops.store import ConversationStore
from chops.web.app import create_app
from tests.unit.pipeline_support import call, db_snapshot, demo_engine, make_agent, member
from tests.unit.web_support import SECRET, user_token

pytestmark = pytest.mark.mariadb


@pytest.fixture
def engine(mariadb_url):
    engine = demo_engine(mariadb_url)
    yield engine
    engine.dispose()


def test_an_unverified_write_is_queued_in_the_real_conversation_and_a_failed_turn_stores_nothing(engine):
    agent, llm = make_agent(engine, architecture="ce_1level")
    svc = ConversationService(ConversationStore(engine, api=agent.api), agent)
    cid = svc.start("demo_leader", "widget")
    llm.enqueue("classifier", {"route": "do_operation"}).enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    turn = svc.run_turn(cid, "demo_leader", "Set my upload limit to 40")
    assert turn.result.queued and member(engine, "demo_leader")["limit"] == 20
    approval = svc.store.get_approval(turn.result.approval_id)
    assert (approval.conversation_id, approval.turn_id) == (cid, turn.turn_id)
    llm.enqueue("classifier", LLMError("timeout", "the model stayed busy"))
    before = db_snapshot(engine)
    with pytest.raises(LLMError):
        svc.run_turn(cid, "demo_leader", "Set my upload limit to 30")
    assert db_snapshot(engine) == before and [t.seq for t in svc.store.history(cid)] == [1]


def test_a_database_that_refuses_connections_is_503_database_unavailable():
    # The real driver against a closed loopback port: the same error a stopped MariaDB gives.
    app = create_app(get_settings(secret_key=SECRET), llm=ScriptedLLM(),
                     engine=make_engine("mysql+pymysql://root@127.0.0.1:9/nowhere"), index=None)
    resp = app.test_client().post("/v1/conversations", json={"token": user_token("demo_leader")})
    assert (resp.status_code, resp.get_json()["error"]["code"]) == (503, "database_unavailable")
