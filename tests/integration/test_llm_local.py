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
