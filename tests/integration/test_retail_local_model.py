"""Smoke: the shop through the real embedded model, in one conversation of the service (the demo shop on
SQLite, the pack's prompts, its router): a customer asks to cancel a pending order they name, the agent
describes the change and writes nothing; the customer's yes commits exactly that change."""

from __future__ import annotations

import pytest

from apis.retail.pack import pack
from chops.bootstrap import build_agent
from chops.conversation import ConversationService
from chops.db import make_engine
from chops.migrate import upgrade
from chops.settings import get_settings
from chops.store import ConversationStore
from tests.unit.pipeline_support import FakeIndex

pytestmark = pytest.mark.local_model


def test_a_cancel_is_described_then_committed_on_yes(local_llm, tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'shop.db'}")
    upgrade(engine, pack)  # the agent's tables and the shop's
    pack.seed_demo(engine)
    api = pack.api(engine)
    store = ConversationStore(engine, api=api)
    settings = get_settings(data_dir=tmp_path)
    agent = build_agent(settings, pack, api, local_llm, FakeIndex(chunks=[]), engine=engine, approvals=store)
    agent.warm()  # as the service does before it says ready: the shop's prompt heads are cached
    service = ConversationService(store, agent)
    conversation = service.start("cai_demo", "eval")

    asked = service.run_turn(conversation, "cai_demo",
                             "Hi, please cancel my order #D0000005, I ordered it by mistake.").result
    assert not asked.committed and pack.export(engine)["orders"]["#D0000005"]["status"] == "pending"
    assert asked.pending is not None and asked.pending["operations"] == ["cancel_pending_order"], asked.reply
    assert "Shall I go ahead?" in asked.reply

    done = service.run_turn(conversation, "cai_demo", "Yes, please go ahead.").result
    assert done.committed and done.trace.get("confirmed") is True, done.reply
    cancelled = pack.export(engine)["orders"]["#D0000005"]
    assert cancelled["status"] == "cancelled" and cancelled["cancel_reason"] == "ordered by mistake"
