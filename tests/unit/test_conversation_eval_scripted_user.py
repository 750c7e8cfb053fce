"""Our scripted-user interpreter against the data pack's reference interpreter: on every train script, over
thousands of generated agent messages, the same reply and the same end, message by message. Plus the rules of
the format on a made-up script."""

from __future__ import annotations

import importlib.util
import json
import random

import pytest

from eval.conversations.scripted_user import MAX_TURNS, STOP, ScriptedUser, ScriptError

FILLER = ("order", "item", "the", "your", "refund", "lamp", "please", "thanks", "great", "I", "we", "can", "help",
          "today", "status", "delivered", "pending", "price", "$12.50", "#W0000000", "card", "address", "done")


@pytest.fixture(scope="module")
def reference(retail_dir):
    """The pack's reference interpreter, imported from its file at test time (never copied here)."""
    path = retail_dir / "users" / "scripted_user.py"
    spec = importlib.util.spec_from_file_location("tau2_retail_scripted_user", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ScriptedUser


@pytest.fixture(scope="module")
def users(retail_dir) -> dict:
    return json.loads((retail_dir / "users" / "train.json").read_text(encoding="utf-8"))


def vocabulary(script: dict, sets: dict) -> list[str]:
    """Every keyword a script's rules can react to (sets expanded), so generated messages hit the rules."""
    words: list[str] = []
    for rule in script["replies"]:
        entries = [*(rule.get("when_any") or []), *(rule.get("unless_any") or [])]
        for entry in rule.get("when_all") or []:
            entries.extend(entry if isinstance(entry, list) else [entry])
        for entry in entries:
            words.extend(sets[entry[1:]] if entry.startswith("@") else [entry])
    return words


def agent_message(rng: random.Random, vocab: list[str], sets: dict) -> str:
    """A made-up agent message: keyword-set strings, the script's own keywords, random words, confirmations,
    in random case; sometimes empty."""
    kind = rng.random()
    if kind < 0.05:
        return ""
    parts = []
    for _ in range(rng.randint(1, 6)):
        pick = rng.random()
        if pick < 0.35:
            parts.append(rng.choice(vocab))
        elif pick < 0.55:
            parts.append(rng.choice(rng.choice(list(sets.values()))))
        elif pick < 0.7:
            parts.append(rng.choice(["Shall I proceed? (yes/no)", "Please confirm the details above.",
                                     "Is there anything else I can help with?", "Would you like me to go ahead?"]))
        else:
            parts.append(" ".join(rng.choice(FILLER) for _ in range(rng.randint(1, 5))))
    text = " ".join(parts)
    return text.upper() if rng.random() < 0.1 else text.title() if rng.random() < 0.1 else text


def test_agrees_with_the_reference_on_every_train_script(users, reference):
    rng = random.Random(20261124)
    sets, compared, ended_by = users["keyword_sets"], 0, {STOP: 0, MAX_TURNS: 0}
    rules, fired = 0, 0
    assert len(users["scripts"]) == users["count"]
    for script in users["scripts"]:
        vocab, seen = vocabulary(script, sets), set()
        rules += len(script["replies"])
        for _conversation in range(10):
            ours, ref = ScriptedUser(script, sets), reference(script, sets)
            text, ended = ours.opening("Hi! How can I help you today?")
            assert (text, ended) == (ref.opening(), ref.done)
            while not ended:
                message = agent_message(rng, vocab, sets)
                text, ended = ours.reply(message)
                expected = ref.reply(message)
                assert (text, ended) == (expected, ref.done), (script["task_id"], message)
                assert ours.fired == ref.fired
                compared += 1
            assert ours.reply("anything else?") == ("", True) and ref.reply("anything else?") == ""
            ended_by[ours.end_reason] += 1
            seen |= set(ours.fired)
        fired += len(seen)
    assert compared >= 3000, compared  # a few thousand generated messages, reply by reply
    assert ended_by[STOP] and ended_by[MAX_TURNS]  # both ways of ending were exercised
    assert fired >= 0.7 * rules, (fired, rules)  # most rules fired at least once (not only the defaults)


# --- the format's rules on a made-up script ------------------------------------------------------------

SETS = {"ok": ["go ahead", "confirm"], "bye": ["anything else"]}
SCRIPT = {
    "task_id": "made-up", "user_id": "pat_example_1", "opening": "I want my blue mug swapped for a red one.",
    "default": "The red mug, please.", "max_turns": 5,
    "replies": [
        {"id": "first_ok", "when_any": ["@ok"], "once": True, "say": "Wait, make it the green one."},
        {"id": "colour", "when_all": [["green", "red"], "mug"], "unless_any": ["@ok"], "say": "Green it is."},
        {"id": "later_ok", "when_any": ["@ok"], "after": ["first_ok"], "say": "Yes, go ahead."},
        {"id": "bye", "when_any": ["@bye"], "unless_after": ["colour"], "say": "No thanks, bye.", "end": True},
        {"id": "bye2", "when_any": ["@bye"], "say": "That's all.", "end": True},
    ],
}


def test_rules_in_order_once_after_unless_and_default():
    user = ScriptedUser(SCRIPT, SETS)
    assert user.opening() == ("I want my blue mug swapped for a red one.", False)
    assert user.reply("Shall I GO AHEAD?") == ("Wait, make it the green one.", False)  # case-insensitive, once
    assert user.reply("Please confirm.") == ("Yes, go ahead.", False)  # first_ok spent; after first_ok
    assert user.reply("A GREEN MUG is in stock.") == ("Green it is.", False)  # when_all: list + string
    assert user.reply("A green cup?") == ("The red mug, please.", True)  # "mug" missing: default; 5th
    assert user.said[-1] == ("default", "The red mug, please.") and user.sent == 5
    assert user.ended and user.end_reason == MAX_TURNS  # the 5th user message was the last



def test_the_evals_cap_ends_a_conversation_sooner_never_later():
    capped = ScriptedUser(SCRIPT, SETS, max_turns=2)
    capped.opening()
    assert capped.reply("A green cup?") == ("The red mug, please.", True) and capped.end_reason == MAX_TURNS
    assert ScriptedUser(SCRIPT, SETS, max_turns=50).max_turns == 5  # the script's own limit stays the limit
    assert ScriptedUser({**SCRIPT, "max_turns": None}, SETS).max_turns == 20  # the format's default

def test_end_rule_and_unless_after():
    user = ScriptedUser(SCRIPT, SETS)
    user.opening()
    assert user.reply("Anything else?") == ("No thanks, bye.", True)
    assert user.end_reason == STOP and user.reply("hello?") == ("", True)
    other = ScriptedUser(SCRIPT, SETS)
    other.opening()
    other.reply("a red mug")
    assert other.reply("anything else?") == ("That's all.", True)  # bye is ruled out after colour


def test_an_undefined_keyword_set_fails_at_once():
    with pytest.raises(ScriptError, match="@nope"):
        ScriptedUser({**SCRIPT, "replies": [{"id": "x", "when_any": ["@nope"], "say": "?"}]}, SETS)
