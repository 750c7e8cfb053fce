"""The LLM seam with the scripted provider: validation, the single retry, errors, accounting."""

from __future__ import annotations

import threading
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from chops.llm import CallRecord, Ledger, LLMError, ScriptedLLM, ScriptExhausted, build_llm
from chops.llm.accounting import cost_usd, estimate_tokens
from chops.settings import get_settings


class Proposal(BaseModel):
    operation: Literal["QueryLimit", "ModifyLimit"]
    limit: int | None = Field(default=None, ge=0)


MSGS = [("system", "You pick an operation."), ("user", "Set my limit to 40.")]


def test_structured_returns_validated_instance_from_dict_or_model_or_json():
    llm = ScriptedLLM()
    llm.enqueue("executor", {"operation": "ModifyLimit", "limit": 40})
    llm.enqueue("executor", Proposal(operation="QueryLimit"))
    llm.enqueue("executor", '```json\n{"operation": "QueryLimit"}\n```')
    assert llm.structured("executor", MSGS, Proposal) == Proposal(operation="ModifyLimit", limit=40)
    assert llm.structured("executor", MSGS, Proposal).operation == "QueryLimit"
    assert llm.structured("executor", MSGS, Proposal).operation == "QueryLimit"
    assert [c[0] for c in llm.calls] == ["executor"] * 3
    assert llm.calls[0][1] == MSGS and llm.calls[0][2] is Proposal


def test_invalid_output_is_retried_once_with_the_validation_error():
    llm = ScriptedLLM()
    llm.enqueue("executor", {"operation": "DeleteEverything"})
    llm.enqueue("executor", {"operation": "ModifyLimit", "limit": 40})
    ledger = Ledger()
    assert llm.structured("executor", MSGS, Proposal, ledger=ledger).limit == 40
    retry_messages = llm.calls[1][1]
    assert retry_messages[:2] == MSGS
    assert retry_messages[2] == ("assistant", '{"operation": "DeleteEverything"}')
    assert retry_messages[3][0] == "user" and "operation" in retry_messages[3][1]
    recs = ledger.records
    assert len(recs) == 2 and all(r.retried for r in recs)
    assert [r.error for r in recs] == ["invalid_output", None]


def test_invalid_output_twice_raises_llm_error_and_records_both():
    llm = ScriptedLLM()
    llm.enqueue("verifier", "not json at all")
    llm.enqueue("verifier", {"operation": "ModifyLimit", "limit": -1})
    ledger = Ledger()
    with pytest.raises(LLMError) as err:
        llm.structured("verifier", MSGS, Proposal, ledger=ledger)
    assert err.value.code == "invalid_output"
    assert "limit" in str(err.value)
    assert err.value.output == '{"operation": "ModifyLimit", "limit": -1}'  # the second reply, for the trace
    assert [r.error for r in ledger.records] == ["invalid_output", "invalid_output"]
    assert ledger.totals()["errors"] == 2 and llm.ledger.totals()["calls"] == 2


def test_unscripted_call_fails_loudly_and_scripted_exceptions_are_raised():
    llm = ScriptedLLM()
    with pytest.raises(ScriptExhausted, match="classifier"):
        llm.text("classifier", MSGS)
    llm.enqueue("executor", LLMError("timeout", "took too long"))
    with pytest.raises(LLMError) as err:
        llm.structured("executor", MSGS, Proposal)
    assert err.value.code == "timeout"
    assert [r.error for r in llm.ledger.records] == ["ScriptExhausted", "timeout"]


def test_callable_reply_sees_messages_and_schema():
    llm = ScriptedLLM()
    llm.enqueue("executor", lambda msgs, schema: schema(operation="ModifyLimit", limit=int(msgs[-1][1].split()[-1][:-1])))
    llm.enqueue("judge", lambda msgs, schema: f"schema={schema}")
    assert llm.structured("executor", MSGS, Proposal).limit == 40
    assert llm.text("judge", MSGS) == "schema=None"
    assert llm.pending() == {}


def test_text_call_accounting_chars_and_per_role_sums():
    llm = ScriptedLLM()
    llm.enqueue("classifier", "guide").enqueue("executor", "hello there").enqueue("classifier", "system")
    request = Ledger()
    llm.text("classifier", MSGS, ledger=request)
    llm.text("executor", [("user", "abc")], ledger=request)
    llm.text("classifier", MSGS)  # another request: only the run ledger sees it
    chars_msgs = sum(len(c) for _, c in MSGS)
    assert request.totals()["calls"] == 2
    assert request.totals()["chars_in"] == chars_msgs + 3
    assert request.totals()["chars_out"] == len("guide") + len("hello there")
    by_role = llm.ledger.by_role()
    assert by_role["classifier"]["calls"] == 2
    assert by_role["classifier"]["chars_out"] == len("guide") + len("system")
    assert by_role["executor"]["chars_in"] == 3
    assert all(r.provider == "scripted" for r in llm.ledger.records)


def test_bad_messages_are_refused():
    llm = ScriptedLLM()
    with pytest.raises(ValueError):
        llm.text("executor", [("robot", "hi")])
    with pytest.raises(ValueError):
        llm.text("executor", [])


def test_cost_uses_reported_tokens_else_chars_over_four():
    assert cost_usd((10.0, 30.0), 1000, 100, 0, 0) == pytest.approx((1000 * 10 + 100 * 30) / 1e6)
    assert estimate_tokens(9) == 3
    assert cost_usd((1.5, 2.0), None, None, 4000, 400) == pytest.approx((1000 * 1.5 + 100 * 2.0) / 1e6)


def test_ledger_sums_tokens_cost_and_is_thread_safe():
    ledger = Ledger()
    rec = CallRecord(role="judge", provider="openai", model="gpt-4-0125-preview", chars_in=10, chars_out=2,
                     prompt_tokens=3, completion_tokens=1, latency_s=0.5, cost_usd=0.001)
    threads = [threading.Thread(target=lambda: [ledger.add(rec) for _ in range(250)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    totals = ledger.totals()
    assert totals["calls"] == 1000 and totals["prompt_tokens"] == 3000 and totals["completion_tokens"] == 1000
    assert totals["cost_usd"] == pytest.approx(1.0) and totals["latency_s"] == pytest.approx(500.0)


def test_build_llm_wires_roles_without_loading_anything(tmp_path):
    settings = get_settings(data_dir=tmp_path, roles={
        "classifier": {"provider": "scripted"}, "executor": {"provider": "openai", "model": "gpt-4-0125-preview",
                                                            "base_url": "http://127.0.0.1:9/v1"}})
    llm = build_llm(settings)
    assert llm.provider("classifier") is llm.script
    assert llm.provider("executor").name == "openai" and llm.provider("executor").prices == (10.0, 30.0)
    assert llm.provider("verifier").name == "local" and llm.provider("verifier").prices == (0.0, 0.0)
    assert llm.provider("classifier") is llm.provider("chooser") or llm.provider("chooser").name == "local"
    assert llm.provider("verifier").engine is llm.provider("judge").engine  # one shared local engine
    assert not llm.provider("verifier").engine.started
    with pytest.raises(LLMError) as err:
        llm.provider("poet")
    assert err.value.code == "unknown_role"
    llm.script.enqueue("classifier", {"operation": "QueryLimit"})
    assert llm.structured("classifier", MSGS, Proposal).operation == "QueryLimit"


def test_the_run_wide_ledger_is_bounded_while_a_turns_ledger_keeps_every_call():
    from chops.llm.base import RUN_LEDGER_RECORDS

    llm = ScriptedLLM()
    turn = Ledger()
    for i in range(RUN_LEDGER_RECORDS + 5):
        llm.enqueue("executor", f"reply {i}")
        llm.text("executor", [("user", "hi")], ledger=turn)
    assert len(llm.ledger) == RUN_LEDGER_RECORDS and len(turn) == RUN_LEDGER_RECORDS + 5
    assert llm.ledger.records[-1].chars_out == len(f"reply {RUN_LEDGER_RECORDS + 4}")
