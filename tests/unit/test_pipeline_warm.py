"""Warming: every static prompt head the pipeline sends is cached before the first user arrives."""

from __future__ import annotations

import pytest

from chops.llm import ScriptedLLM
from tests.unit.pipeline_support import call, demo_engine, make_agent, to_guide, to_profile, to_system, verdict


class WarmableLLM(ScriptedLLM):
    """A scripted model whose providers keep a prompt cache: ``warmed`` lists (role, system text)."""

    def __init__(self) -> None:
        super().__init__()
        self.warmed: list[tuple[str, str]] = []

    def warm(self, role: str, system: str) -> bool:
        self.warmed.append((role, system))
        return True


def _system_prompts(llm: ScriptedLLM) -> set[tuple[str, str]]:
    return {(role, msgs[0][1]) for role, msgs, _ in llm.calls if msgs[0][0] == "system"}


@pytest.mark.parametrize("architecture", ["cev_2level", "cev_1level"])
def test_every_system_prompt_a_turn_sends_was_warmed(sqlite_url, architecture):
    llm = WarmableLLM()
    agent, _ = make_agent(demo_engine(sqlite_url), llm=llm, architecture=architecture)
    assert agent.warm() == len(llm.warmed) == len(set(llm.warmed))
    one = architecture == "cev_1level"
    # a write, a guide answer and a profile answer: every executor and verifier prompt
    (llm.enqueue("classifier", {"route": "do_operation"}) if one else to_system(llm))
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    agent.handle("demo_leader", "Set my upload limit to 40.", turn_key="w:1")
    (llm.enqueue("classifier", {"route": "answer_from_guide"}) if one else to_guide(llm))
    llm.enqueue("executor", {"source": 1, "answer": "No."}).enqueue("verifier", verdict(9))
    agent.handle("demo_leader", "Can I upload late?", turn_key="w:2")
    llm.enqueue("classifier", {"route": "own_fact"}) if one else to_profile(llm)
    llm.enqueue("executor", {"answer": "You have 3 left."}).enqueue("verifier", verdict(9))
    agent.handle("demo_busy_leader", "How many are left for me?", turn_key="w:3")
    assert llm.pending() == {}
    assert _system_prompts(llm) <= set(llm.warmed)


def test_a_model_without_prompt_caches_warms_nothing(sqlite_url):
    agent, llm = make_agent(demo_engine(sqlite_url))
    assert agent.warm() == 0 and llm.calls == []
