"""Smoke test with the real embedded model: schema-constrained calls return valid objects."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from chops.llm import Ledger

pytestmark = pytest.mark.local_model


class Proposal(BaseModel):
    operation: Literal["QueryLimit", "ModifyLimit", "QueryTeamLeader"] = Field(description="the operation to call")
    limit: int | None = Field(default=None, description="the new upload limit, for ModifyLimit")


class Verdict(BaseModel):
    score: int = Field(ge=1, le=10)
    reason: str


SYSTEM = ("You map a user's request to exactly one operation. Operations: QueryLimit() - read the upload limit; "
          "ModifyLimit(limit: int) - set the upload limit; QueryTeamLeader() - who the team leader is. "
          "Reply with JSON.")


def test_two_structured_calls_return_valid_objects_and_reuse_the_prefix(local_llm):
    ledger = Ledger()
    first = local_llm.structured("executor", [("system", SYSTEM), ("user", "Please change my upload limit to 40.")],
                                 Proposal, ledger=ledger)
    second = local_llm.structured("executor", [("system", SYSTEM), ("user", "Who is my team leader?")],
                                  Proposal, ledger=ledger)
    assert isinstance(first, Proposal) and isinstance(second, Proposal)
    assert first.operation == "ModifyLimit" and first.limit == 40
    assert second.operation == "QueryTeamLeader"
    recs = [r for r in ledger.records if r.error is None]
    assert all(r.provider == "local" and r.prompt_tokens and r.completion_tokens for r in recs)
    # the shared system prompt was evaluated once: the second call found it in the KV cache
    assert recs[-1].cache_hit is True and recs[-1].cached_tokens >= 40


def test_verifier_shape_with_bounded_integer(local_llm):
    verdict = local_llm.structured(
        "verifier", [("system", "Rate from 1 to 10 how well the answer fits the question. Reply with JSON."),
                     ("user", "Question: what is 2+2? Answer: 4")], Verdict)
    assert 1 <= verdict.score <= 10 and verdict.reason


def test_replies_are_compact_json_and_a_streamed_answer_arrives_in_pieces(local_llm):
    import json

    from chops.llm.streaming import JsonStringField
    from chops.pipeline.schemas import GuideAnswer

    msgs = [("system", "Answer the question from the numbered excerpt. Reply with JSON."),
            ("user", "[1] Answer sheets can be uploaded until 18:00 on the exam day.\n"
                     "Question: Until when can I upload answer sheets?")]
    comp = local_llm.provider("executor").complete("executor", msgs, GuideAnswer)
    assert comp.text == json.dumps(json.loads(comp.text), separators=(",", ":"), ensure_ascii=False)
    pieces: list[str] = []
    out = local_llm.structured("executor", msgs, GuideAnswer, on_delta=JsonStringField("answer", pieces.append).feed)
    assert len(pieces) >= 2 and "".join(pieces) == out.answer and "18:00" in out.answer
    rec = local_llm.ledger.records[-1]
    assert rec.completion_tokens and 0 < rec.first_token_s < rec.latency_s


def test_model_serve_is_an_openai_compatible_endpoint_with_a_key(tmp_path):
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path

    from chops.llm import LLMError, build_llm
    from chops.settings import get_settings

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "CHOPS_MODEL_API_KEY": "s3cret", "CHOPS_LOCAL_SLOTS": "2"}
    chops = str(Path(sys.executable).with_name("chops"))
    proc = subprocess.Popen([chops, "model", "serve", "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert "serving" in proc.stdout.readline()  # printed once the model is loaded
        role = {"provider": "openai", "model": "qwen2.5-coder-1.5b-instruct-q4_k_m", "llama_cpp": True,
                "base_url": f"http://127.0.0.1:{port}/v1", "api_key_env": "CHOPS_TEST_SERVE_KEY"}
        os.environ["CHOPS_TEST_SERVE_KEY"] = "s3cret"
        llm = build_llm(get_settings(data_dir=tmp_path, roles={"executor": role}))
        out = llm.structured("executor", [("system", SYSTEM), ("user", "Set my upload limit to 40.")], Proposal)
        assert out.operation == "ModifyLimit" and out.limit == 40
        os.environ["CHOPS_TEST_SERVE_KEY"] = "wrong"
        with pytest.raises(LLMError) as err:
            build_llm(get_settings(data_dir=tmp_path, roles={"executor": role})).structured(
                "executor", [("user", "hi")], Proposal)
        assert err.value.code == "auth"
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        assert proc.wait(timeout=30) == 0 and time.monotonic() - t0 < 30
    finally:
        os.environ.pop("CHOPS_TEST_SERVE_KEY", None)
        if proc.poll() is None:
            proc.kill()


def test_a_one_each_list_takes_one_variant_of_each_product_even_when_told_to_repeat_one(local_llm):
    """The swap grammar (``CHOICES_ONE_EACH``): the 1.5B wrote one product's variant twice; decoded with it, the
    second position can only be the other product's."""
    from apis.retail.registry import OPERATIONS
    from chops.pipeline.choices import arg_options
    from chops.pipeline.schemas import plan_schema

    exchange = OPERATIONS["exchange_delivered_order_items"]
    order = {"order_id": "#W0000001", "status": "delivered",
             "items": [{"name": "Rowing Machine", "product_id": "p1", "item_id": "1111111111"},
                       {"name": "Yoga Mat", "product_id": "p2", "item_id": "2222222222"}]}
    products = [{"name": "Rowing Machine", "product_id": "p1", "variants": {"1111111111": {}, "1111111112": {}}},
                {"name": "Yoga Mat", "product_id": "p2", "variants": {"2222222222": {}, "2222222223": {}}}]
    options = arg_options([exchange], [order, *products], (), "exchange my rowing machine and my yoga mat")
    repeated = ('{"calls":[{"operation":"exchange_delivered_order_items","args":{"order_id":"#W0000001","item_ids":'
                '["1111111111","2222222222"],"new_item_ids":["1111111112","1111111112"],"payment_method_id":null}}]}')
    out = local_llm.structured("executor", [("user", f"Output exactly this JSON: {repeated}")],
                               plan_schema((exchange,), False, options))
    new = out.calls[0].args.new_item_ids
    assert len(new) == 2 and new[0].startswith("1111") and new[1].startswith("2222"), new
