"""The shop's router with the real USE embedder, on made-up wordings that are not among its examples: a question
about what the store sells (the cheapest of a product, its options) is looked up, not answered from the policy. Sent
to the model classifier, "what's the cheapest … and its options?" was routed to the guides, and the answer named
options no keyboard has, citing the policy."""

from __future__ import annotations

import pytest

from chops.domain.pack import load_pack
from chops.router import router_for
from chops.settings import get_settings


@pytest.fixture(scope="module")
def router(tmp_path_factory):
    settings = get_settings(data_dir=tmp_path_factory.mktemp("router"))
    return router_for(settings, load_pack("retail"))


@pytest.mark.parametrize("text, route", [
    ("Which is the least expensive gaming mouse you carry, and what versions does it have?", "system"),
    ("what's the cheapest blender you sell at the moment?", "system"),
    ("the lowest priced wall clock in stock, what options has it got?", "system"),
    ("How long do I have to send something back for a refund?", "guide"),
])
def test_a_question_about_what_the_shop_sells_is_looked_up(router, text, route):
    decision = router.decide(text)
    assert decision.route == route and decision.sure, decision
