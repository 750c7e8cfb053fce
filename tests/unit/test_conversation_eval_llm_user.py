"""The LLM-played customer with a fake chat model (no network): our simulator prompt filled with the task's
scenario, the roles the model sees, the end markers, max_turns; and a run of the eval with it."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from eval.conversations.llm_user import LLMUser, scenario_text, strip_markers, system_prompt
from eval.conversations.runner import ConversationEvalConfig, run_conversations
from tests.unit.convo_support import MiniPack, stub_service_factory, write_dump, write_task_files

INSTRUCTIONS = {"domain": "shop", "reason_for_call": "You want order #M1 cancelled.", "known_info": "You are Ann.",
                "unknown_info": "You do not remember your email.", "task_instructions": "Be brief.",
                "persona_hint": "Polite."}


class FakeChat:
    """A chat model answering from a list and keeping what it was sent."""

    def __init__(self, *replies: str) -> None:
        self.replies, self.seen = list(replies), []

    def invoke(self, messages):
        self.seen.append(list(messages))
        return AIMessage(content=self.replies.pop(0), usage_metadata={"input_tokens": 50, "output_tokens": 7,
                                                                      "total_tokens": 57})


def test_the_prompt_carries_the_guidelines_and_the_scenario():
    prompt = system_prompt(INSTRUCTIONS)
    for phrase in ("one message at a time", "Never make up information", "a little at a time", "###STOP###",
                   "###TRANSFER###", "###OUT-OF-SCOPE###", "<scenario>"):
        assert phrase in prompt, phrase
    scenario = scenario_text(INSTRUCTIONS)
    assert scenario in prompt and "$scenario" not in prompt
    assert scenario.index("order #M1") < scenario.index("You are Ann.") < scenario.index("email") < \
        scenario.index("Be brief.") < scenario.index("Polite.")
    assert "shop" not in scenario  # the domain's name is not part of the customer's story
    assert scenario_text("Just a plain scenario. ") == "Just a plain scenario." and scenario_text(None) == ""


def test_a_conversation_with_the_fake_model():
    chat = FakeChat("Hi, I'd like to cancel order #M1.", "Yes, go ahead.", "Thanks, that's all. ###STOP###")
    user = LLMUser(chat, INSTRUCTIONS)
    assert user.opening("Hi! How can I help you today?") == ("Hi, I'd like to cancel order #M1.", False)
    assert user.reply("Shall I cancel #M1? (yes/no)") == ("Yes, go ahead.", False)
    assert user.reply("Done. Anything else?") == ("Thanks, that's all.", True)
    assert user.end_reason == "stop" and user.reply("Bye") == ("", True) and len(chat.seen) == 3
    last = chat.seen[-1]
    assert isinstance(last[0], SystemMessage) and "order #M1 cancelled" in last[0].content
    # The agent speaks as the model's "user"; the customer's own messages are its replies, markers kept.
    assert [type(m) for m in last[1:]] == [HumanMessage, AIMessage, HumanMessage, AIMessage, HumanMessage]
    assert last[1].content == "Hi! How can I help you today?" and last[-1].content == "Done. Anything else?"
    assert user.calls[0]["tokens_in"] == 50 and user.calls[0]["tokens_out"] == 7


def test_markers_and_max_turns():
    assert strip_markers("You transferred me. ###TRANSFER###") == ("You transferred me.", "transfer")
    assert strip_markers("###OUT-OF-SCOPE###") == ("", "out_of_scope")
    assert strip_markers("ok ###STOP### ###TRANSFER###") == ("ok", "stop")
    assert strip_markers("no marker") == ("no marker", None)
    user = LLMUser(FakeChat("one", "two", "three"), "Plain scenario.", max_turns=2)
    assert user.opening() == ("one", False) and user.reply("?") == ("two", True) and user.end_reason == "max_turns"


def test_the_eval_runs_with_an_llm_user(tmp_path):
    tasks, _ = write_task_files(tmp_path / "pack" / "tasks")
    cfg = ConversationEvalConfig(domain="minishop", tasks=tasks, dump=write_dump(tmp_path / "pack" / "database"),
                                 user_model_url="http://127.0.0.1:9/v1", user_model_name="fake", task_ids=["cancel"])
    chat = FakeChat("Please cancel my order #M1.", "Yes.", "No, that's all. ###STOP###")
    [rec] = run_conversations(cfg, tmp_path / "run", pack=MiniPack(), make_service=stub_service_factory(),
                              user_chat=chat, progress=False)
    # Without a users file the signed-in customer is the user_id the reference actions pass; this task passes
    # none, so its record is a failure that says so (not a conversation as nobody).
    assert rec["error_code"] == "crash" and "no customer" in rec["error"]
    data = json.loads(tasks.read_text())
    data[0]["evaluation_criteria"]["actions"].insert(0, {"action_id": "x", "name": "get_user_details",
                                                         "arguments": {"user_id": "ann_lee_1"}})
    tasks.write_text(json.dumps(data))
    chat = FakeChat("Please cancel my order #M1.", "Yes.", "No, that's all. ###STOP###")
    [rec] = run_conversations(cfg, tmp_path / "run2", pack=MiniPack(), make_service=stub_service_factory(),
                              user_chat=chat, progress=False)
    assert rec["passed"] and rec["user_kind"] == "LLMUser" and rec["user_calls"] == 3 and rec["ended"] == "stop"
    assert (rec["user_tokens_in"], rec["user_tokens_out"]) == (150, 21)
