"""Putting back what the conversation changed (``chops.pipeline.undo``): the values a commit replaced, from its diff,
on the made-up shop (Mia's default address is 7 Lark Street, Unit 2)."""

from __future__ import annotations

import pytest

from apis.retail import loader
from chops.pipeline.undo import _BACK
from tests.unit.pipeline_support import to_system, verdict
from tests.unit.retail_support import MIA, order
from tests.unit.test_fanout import oak_road
from tests.unit.test_lookup_confirm import YES
from tests.unit.test_retail_agent import shop  # noqa: F401  (fixture)


@pytest.mark.parametrize("text, back", [
    ("I regret it. Please change my default address back to what it was before.", True),
    ("Can you set it back the way it was?", True),
    ("Undo that last change, please", True),
    ("Please revert my address", True),
    ("Put the old address back", True),
    ("请把地址改回原来的", True),
    ("I want to send it back for a refund", False),  # a return
    ("I'd like my money back", False),
    ("Change the address and get back to me", False),
])
def test_a_request_to_put_something_back(text, back):
    assert bool(_BACK.search(text)) is back


def _user(engine) -> dict:
    return loader.export(engine)["users"][MIA]["address"]


def test_a_default_address_changed_back_takes_the_values_its_commit_replaced(shop):  # noqa: F811
    agent, engine, llm = shop
    oak_road(llm)
    asked = agent.handle(MIA, "Change my default address and my pending orders' address to 12 Oak Road, Testville, "
                         "ZZ 11111", turn_key="u:1", conversation_id="u")
    history = [asked.to_record("Change my default address and my pending orders' address to 12 Oak Road")]
    llm.enqueue("classifier", YES)
    done = agent.handle(MIA, "yes", history=history, turn_key="u:2", conversation_id="u")
    assert done.committed and _user(engine)["address1"] == "12 Oak Road"
    history.append(done.to_record("yes"))
    to_system(llm)
    llm.enqueue("verifier", verdict(9))  # no executor call: the values come from the commit
    back = agent.handle(MIA, "Actually I regret it, please change my default address back to what it was. Leave the "
                        "order as it is.", history=history, turn_key="u:3", conversation_id="u")
    assert back.outcome == "pending_confirmation" and back.operation == "modify_user_address"
    assert (back.args["address1"], back.args["address2"]) == ("7 Lark Street", "Unit 2")
    assert llm.pending() == {}
    history.append(back.to_record("change it back"))
    llm.enqueue("classifier", YES)
    assert agent.handle(MIA, "yes", history=history, turn_key="u:4", conversation_id="u").committed
    assert _user(engine)["address1"] == "7 Lark Street" and _user(engine)["address2"] == "Unit 2"
