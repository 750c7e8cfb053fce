"""The scripted customers who write Chinese (``eval/cases/retail_zh``: train tasks of the tau2-retail pack;
``eval/cases/retail_own_zh``: our own conversations), read through the project's interpreter: each names an
existing task and that task's customer, writes Chinese, keeps the rules of the English script it rewrites (so the
expected end state is the same), and its keyword sets read an agent that answers in English or in Chinese.

The train tasks are read from the data pack (``CHOPS_RETAIL_DIR``, else ``../shared/tau2-retail``): a missing pack
fails the test, it is never skipped."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from chops.i18n import N_, text_language, translate
from chops.pipeline.replies import anything_else_reply, confirm_reply
from eval.conversations.scripted_user import STOP, ScriptedUser
from eval.conversations.tasks import load_tasks, load_users

ROOT = Path(__file__).resolve().parents[2]
ZH_TRAIN = ROOT / "eval" / "cases" / "retail_zh" / "users.json"
ZH_OWN = ROOT / "eval" / "cases" / "retail_own_zh" / "users.json"
OWN = ROOT / "eval" / "cases" / "retail_own"
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
# Scripts whose rules differ from the English one on purpose: the Spanish original keyed its payment rule on Spanish
# words only; the Chinese customer's also reads the payment_question set.
REWORDED_RULES = {"own2_es_return"}
WRITES = {"cancel_pending_order", "return_delivered_order_items", "exchange_delivered_order_items",
          "modify_pending_order_items", "modify_pending_order_address", "modify_user_address",
          "modify_pending_order_payment"}


@pytest.fixture(scope="module")
def zh_train():
    return load_users(ZH_TRAIN)


@pytest.fixture(scope="module")
def zh_own():
    return load_users(ZH_OWN)


@pytest.fixture(scope="module")
def train_tasks(retail_dir):
    path = retail_dir / "tasks" / "train.json"
    assert path.is_file(), f"no train tasks at {path}; set CHOPS_RETAIL_DIR"
    return {t.id: t for t in load_tasks(path)}


@pytest.fixture(scope="module")
def train_users(retail_dir):
    return load_users(retail_dir / "users" / "train.json")


@pytest.fixture(scope="module")
def own_tasks():
    return {t.id: t for t in load_tasks(OWN / "tasks.json")}


@pytest.fixture(scope="module")
def own_users():
    return load_users(OWN / "users.json")


def pairs(zh_train, zh_own, train_users, own_users):
    """(file label, Chinese users file, the English users file its scripts rewrite)."""
    return [("retail_zh", zh_train, train_users), ("retail_own_zh", zh_own, own_users)]


def start(users, task_id: str) -> ScriptedUser:
    """A fresh customer of ``task_id`` who has sent the opening."""
    user = ScriptedUser(users.script(task_id), users.keyword_sets)
    user.opening("您好！请问今天有什么可以帮您？")
    return user


def rule_of(users, task_id: str, *agent_messages: str) -> str:
    """The rule (or "default") that answers the last of ``agent_messages``, each answered in turn."""
    user = start(users, task_id)
    for text in agent_messages:
        user.reply(text)
    return user.said[-1][0]


# --- the files --------------------------------------------------------------------------------------------------

def test_each_script_names_an_existing_train_task_and_its_customer(zh_train, train_tasks, train_users, retail_dir):
    assert len(zh_train.scripts) >= 22
    for task_id, script in zh_train.scripts.items():
        assert task_id in train_tasks, f"retail_zh: no train task {task_id}"
        assert script["user_id"] == train_users.script(task_id)["user_id"], task_id
        user = ScriptedUser(script, zh_train.keyword_sets)  # every @set is defined
        assert user.opening()[0] == script["opening"]
    # what `chops eval conversations --task-ids ...` does with these ids: all found, nothing else taken
    chosen = load_tasks(retail_dir / "tasks" / "train.json", task_ids=list(zh_train.scripts))
    assert {t.id for t in chosen} == set(zh_train.scripts)
    # a varied set: every kind of write of the train split, a transfer, and tasks where nothing may be written
    kinds = {a.name for t in chosen for a in t.actions}
    assert WRITES - {"modify_pending_order_payment"} <= kinds  # no train task changes an order's payment
    assert "transfer_to_human_agents" in kinds
    assert any(not any(a.name in WRITES for a in t.actions) for t in chosen)


def test_each_script_names_one_of_our_conversations_and_its_customer(zh_own, own_tasks, own_users):
    assert len(zh_own.scripts) >= 20
    for task_id, script in zh_own.scripts.items():
        assert task_id in own_tasks, f"retail_own_zh: no task {task_id} in retail_own/tasks.json"
        assert script["user_id"] == own_users.script(task_id)["user_id"], task_id
        ScriptedUser(script, zh_own.keyword_sets)
    kinds = {a.name for task_id in zh_own.scripts for a in own_tasks[task_id].actions}
    assert WRITES <= kinds


# --- the customer writes Chinese --------------------------------------------------------------------------------

def test_the_customer_writes_chinese(zh_train, zh_own):
    for users in (zh_train, zh_own):
        for task_id, script in users.scripts.items():
            for key in ("opening", "default"):
                text = script[key]
                han, words = len(HAN.findall(text)), len(LATIN_WORD.findall(text))
                # mostly Chinese: ids, addresses and option values ("blue", "XL") may stay as the data writes them
                assert han >= 2 * words and han >= 4, (task_id, key, text)
            # every message reads as Chinese to the agent, which answers in the language of the latest message
            for source, text in [("opening", script["opening"]), ("default", script["default"]),
                                 *[(r["id"], r["say"]) for r in script["replies"]]]:
                assert text_language(text) == "zh", (task_id, source, text)


# --- the English scripts' rules, kept --------------------------------------------------------------------------

RULE_KEYS = ("id", "once", "after", "unless_after", "end")


def test_each_script_keeps_the_rules_of_the_english_one(zh_train, zh_own, train_users, own_users):
    for label, zh, en in pairs(zh_train, zh_own, train_users, own_users):
        for task_id, script in zh.scripts.items():
            english = en.script(task_id)
            assert [[r.get(k) for k in RULE_KEYS] for r in script["replies"]] == \
                   [[r.get(k) for k in RULE_KEYS] for r in english["replies"]], (label, task_id)
            assert script.get("max_turns") == english.get("max_turns"), (label, task_id)


def test_keyword_sets_hold_the_english_strings_and_chinese_ones(zh_train, zh_own, train_users, own_users):
    for label, zh, en in pairs(zh_train, zh_own, train_users, own_users):
        for name, strings in en.keyword_sets.items():
            assert set(strings) <= set(zh.keyword_sets[name]), (label, name)
        for name, strings in zh.keyword_sets.items():
            added = set(strings) - set(en.keyword_sets.get(name, []))
            # a string added to an English set is Chinese: English agent messages match exactly as before
            if name in en.keyword_sets:
                assert all(HAN.search(s) for s in added), (label, name, [s for s in added if not HAN.search(s)])
            assert any(HAN.search(s) for s in strings) and any(not HAN.search(s) for s in strings), (label, name)


def _vocabulary(script: dict, sets: dict) -> list[str]:
    words: list[str] = []
    for rule in script["replies"]:
        entries = [*(rule.get("when_any") or []), *(rule.get("unless_any") or [])]
        for entry in rule.get("when_all") or []:
            entries.extend(entry if isinstance(entry, list) else [entry])
        words.extend(w for e in entries for w in (sets[e[1:]] if e.startswith("@") else [e]))
    return words


def _english_message(rng: random.Random, vocab: list[str], sets: dict) -> str:
    parts = [rng.choice(vocab) if rng.random() < 0.5 else rng.choice(rng.choice(list(sets.values())))
             for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.3:
        parts.append(rng.choice(["Shall I proceed? (yes/no)", "Is there anything else I can help with?",
                                 "Your order #W0000000 is pending.", "The refund is $12.50."]))
    return " ".join(parts)


def test_on_english_agent_messages_each_script_answers_as_the_english_one(zh_train, zh_own, train_users, own_users):
    """The same rules fire, message by message, and the conversation ends at the same point: with an agent that
    answers in English the Chinese customer does what the English one does, only in other words."""
    rng = random.Random(58)
    for label, zh, en in pairs(zh_train, zh_own, train_users, own_users):
        for task_id, script in zh.scripts.items():
            if task_id in REWORDED_RULES:
                continue
            english = en.script(task_id)
            vocab = _vocabulary(english, en.keyword_sets)
            for _conversation in range(15):
                ours, theirs = ScriptedUser(script, zh.keyword_sets), ScriptedUser(english, en.keyword_sets)
                ours.opening(), theirs.opening()
                while not (ours.ended or theirs.ended):
                    text = _english_message(rng, vocab, en.keyword_sets)
                    ours.reply(text), theirs.reply(text)
                    assert ours.said[-1][0] == theirs.said[-1][0], (label, task_id, text)
                assert (ours.ended, ours.end_reason) == (theirs.ended, theirs.end_reason), (label, task_id)


# --- an agent in Chinese or in English ---------------------------------------------------------------------------

ZH_CONFIRM = ["我将为您取消订单 #W1234567（误下单）。请确认是否继续？",
              "好的，订单 #W1234567 中的商品将办理退货，退款退回原付款方式。确认要继续吗？（是/否）",
              "以下是将要进行的修改：订单 #W1234567 的商品换成新款式。您确定要这样办理吗？"]
EN_CONFIRM = ["I'll cancel order #W1234567 (reason: ordered by mistake). Shall I proceed? (yes/no)",
              "To confirm: the items of order #W1234567 will be returned to the original payment method. "
              "Would you like me to go ahead?",
              "Here are the changes for order #W1234567. Is that correct?"]
# The agent's own confirmation question, as the pipeline writes it in each language.
CATALOG_CONFIRM = {lang: confirm_reply("- #W1234567", lang) for lang in ("zh", "en")}
# The question whether to go on with the next request after one was refused (chops.pipeline.agenda).
GO_ON = {lang: translate(lang, N_("Shall I go on with your next request (“{request}”), or is there something you would "
                                  "like in place of this one?"), request="#W1234567") for lang in ("zh", "en")}
# The rule a confirmation question fires first, per script.
FIRST_CONFIRM = {("retail_zh", "113"): "yes", ("retail_zh", "16"): "yes", ("retail_zh", "0"): "yes",
                 ("retail_zh", "92"): "c1", ("retail_zh", "21"): "c1", ("retail_zh", "24"): "k1",
                 ("retail_own_zh", "own_cancel"): "yes", ("retail_own_zh", "own_return"): "yes",
                 ("retail_own_zh", "own3_return_and_cancel"): "yes", ("retail_own_zh", "own9_boots_both"): "no"}


def test_the_catalog_questions_are_chinese():
    for texts in (CATALOG_CONFIRM, GO_ON):
        assert HAN.search(texts["zh"]) and not HAN.search(texts["en"])


@pytest.mark.parametrize("key", sorted(FIRST_CONFIRM))
def test_a_confirmation_question_in_chinese_or_english_gets_the_confirmation_reply(key, zh_train, zh_own):
    label, task_id = key
    users = zh_train if label == "retail_zh" else zh_own
    for text in [*ZH_CONFIRM, CATALOG_CONFIRM["zh"], GO_ON["zh"], *EN_CONFIRM, CATALOG_CONFIRM["en"], GO_ON["en"]]:
        assert rule_of(users, task_id, text) == FIRST_CONFIRM[key], (key, text)


def test_a_request_added_at_the_confirmation_comes_once_then_the_yes(zh_train):
    for first, second in [(ZH_CONFIRM[0], EN_CONFIRM[0]), (EN_CONFIRM[1], ZH_CONFIRM[1])]:
        user = start(zh_train, "92")  # the smart watch and the e-reader are added at the first confirmation
        assert user.reply(first) == ("等一下，先别办。智能手表和电子阅读器我也要一起退。", False)
        user.reply(second)
        assert user.said[-1][0] == "yes"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_generic_questions_in_either_language(lang, zh_train):
    zh = lang == "zh"
    asks = {
        "reason": "请问取消的原因是什么？" if zh else "What is the reason for the cancellation?",
        "pay": "请问退款退到哪种付款方式？" if zh else "Which payment method would you like the refund to go to?",
        "oid": "请提供您的订单号。" if zh else "Could you give me the order id?",
        "ident": "请提供您的邮箱或者邮编，以便核实您的身份。" if zh else "Please give me your email or zip code.",
        "t_offer": "需要我为您转接人工客服吗？" if zh else "I can connect you with a human agent.",
    }
    for rule, text in asks.items():
        assert rule_of(zh_train, "113", text) == rule, (lang, text)
    # "anything else?" ends the conversation, and so does a transfer
    for text in [anything_else_reply(lang), "还有其他问题吗？" if zh else "Anything else today?",
                 "已为您转接人工客服，请稍候。" if zh else "You are being transferred to a human agent."]:
        user = start(zh_train, "113")
        _said, ended = user.reply(text)
        assert ended and user.end_reason == STOP, (lang, text)


def test_chinese_sentences_that_only_look_like_a_question_do_not_fire_it(zh_train):
    # "the order has other items" is no "anything else?"; "I'm not sure whether I understood" is no confirmation
    assert rule_of(zh_train, "113", "您的订单中还有其他商品：台灯和水壶。") == "default"
    assert rule_of(zh_train, "113", "我不确定是否准确理解了您想更改的内容，所以没有做任何更改。") == "default"
    assert rule_of(zh_train, "113", "I'm not sure I have understood exactly what you would like changed.") == "default"


def test_files_are_json_with_the_format_named():
    for path, fmt in [(ZH_TRAIN, "tau2-retail scripted user, v1"), (ZH_OWN, "chops scripted users (eval/README.md)")]:
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert doc["format"] == fmt and doc["language"] == "zh" and doc["count"] == len(doc["scripts"])
