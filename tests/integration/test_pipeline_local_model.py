"""Smoke test with the real embedded model: a guide question and a write, end to end on the demo
data and the demo guides. Fails (never skips) when the model is not installed."""

from __future__ import annotations

import pytest

from apis.cphos.pack import pack as cphos_pack
from apis.cphos.service import Api
from chops.pipeline import Agent
from chops.retrieval import GuideIndex
from chops.settings import REPO_ROOT, get_settings
from chops.store import ConversationStore
from tests.unit.pipeline_support import db_snapshot, demo_engine, member

pytestmark = pytest.mark.local_model


@pytest.fixture
def setup(local_llm, sqlite_url, tmp_path):
    settings = get_settings(data_dir=tmp_path, guides_dir=REPO_ROOT / "guides")
    engine = demo_engine(sqlite_url)
    index = GuideIndex.load_or_build(settings.guides_dir, settings)
    api = Api(engine)
    return Agent(api, local_llm, settings, index, approvals=ConversationStore(engine, api=api),
                 prompts=cphos_pack.prompts), engine


def test_a_guide_question_is_answered_from_the_demo_guides_with_a_citation(setup):
    agent, engine = setup
    before = db_snapshot(engine)
    res = agent.handle("demo_leader", "Can I upload answer sheets after the deadline?", turn_key="smoke:1")
    assert res.error is None, res.trace.get("error")
    assert res.route == "guide" and res.operation is None
    assert "Source: " in res.reply and (".pdf, page " in res.reply)
    assert "no" in res.reply.lower() or "not" in res.reply.lower()
    assert res.chars_in > 0 and res.iterations >= 1
    assert db_snapshot(engine) == before


def test_a_write_is_carried_out_for_the_demo_leader(setup):
    agent, engine = setup
    store = ConversationStore(engine, api=Api(engine))
    cid = store.create("demo_leader", "cli")
    res = agent.handle("demo_leader", "Please change my upload limit to 40.", turn_key=store.turn_key(cid),
                       conversation_id=cid)
    assert res.error is None, res.trace.get("error")
    assert res.route == "system" and res.operation == "ChangeAllTypesUploadLimit" and res.args == {"Limit": 40}
    if res.committed:
        assert res.outcome == "ok" and member(engine, "demo_leader")["limit"] == 40
    else:  # the verifier never passed it: then it must be waiting for staff, unwritten
        assert res.queued and member(engine, "demo_leader")["limit"] == 20
        assert store.get_approval(res.approval_id).status == "pending"


def test_a_chinese_question_about_ones_own_data_gets_a_chinese_answer(setup):
    """With the embedding router deciding the route (no classifier call), as the service runs it."""
    import re

    from apis.cphos.pack import pack
    from chops.router import router_for

    agent, engine = setup
    settings = agent.settings.model_copy(update={"router_enabled": True})
    routed = Agent(agent.api, agent.llm, settings, agent.retriever.index, approvals=agent.approvals,
                   router=router_for(settings, pack, agent.retriever.index), prompts=pack.prompts)
    res = routed.handle("demo_leader", "我现在的上传上限是多少？", turn_key="smoke:zh")
    assert res.route == "basic_info" and res.error is None
    assert re.search(r"[\u4e00-\u9fff]", res.reply) and "20" in res.reply, res.reply
