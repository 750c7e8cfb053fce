"""Replies in the user's language: the same requests in English and Chinese, through the whole agent
with a scripted model over the real demo database, and the real catalogs."""

from __future__ import annotations

import re

import pytest

from chops.i18n import text_language
from chops.pipeline import TurnRecord
from tests.unit.pipeline_support import (call, db_snapshot, demo_engine, make_agent, member, to_guide, to_system,
                                         verdict)

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def engine(sqlite_url):
    return demo_engine(sqlite_url)


def _write(llm, operation, **args):
    to_system(llm)
    llm.enqueue("executor", call(operation, **args))
    llm.enqueue("verifier", verdict(9))


def _queued(llm, operation, **args):  # one round, rejected: the chooser's pick goes to staff
    to_system(llm)
    llm.enqueue("executor", call(operation, **args))
    llm.enqueue("verifier", verdict(2, "unsure"))


def _guide(llm, operation, **args):
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": args["answer"]})
    llm.enqueue("verifier", verdict(9))


# kind -> (sender, script, operation, args, English request, Chinese request, expected English, expected Chinese)
CASES = {
    "done": ("demo_leader", _write, "ChangeAllTypesUploadLimit", {"Limit": 40},
             "Please set my upload limit to 40.", "请把我的上传上限改成40。",
             "Done: Your upload limit is now 40.", "已完成：更改上传上限：40。"),
    "noop": ("demo_leader", _write, "ChangeAllTypesUploadLimit", {"Limit": 20},
             "Set my upload limit to 20", "把我的上传上限设为二十",
             "Done: nothing needed to change. Your upload limit already is 20.", "已完成，无需更改：更改上传上限：20。"),
    "refused": ("demo_busy_leader", _write, "ChangeAllTypesMarkingSubject", {"SubjectIndex": 4},
                "Switch me to grading problem 4", "我想改成阅卷第四题",
                "I couldn't do that: You cannot change your marking subject: you have not finished marking "
                "(3 problem(s) left in the current exam).",
                "无法办理：更改阅卷题号：您账户的当前状态不允许此操作。"),
    "refused_permission": ("demo_leader", _write, "GetTeacherInfoBySchoolName", {"SchoolName": "Lakeside Academy"},
                           "Who works at Lakeside Academy?", "Lakeside Academy 有哪些老师在用系统？",
                           None, "无法办理：查询学校的用户：您没有执行此操作的权限。"),
    "invalid": ("demo_leader", _write, "ChangeAllTypesSchool", {"SchoolName": "Atlantis"},
                "Move me to Atlantis please", "请把我的学校改为Atlantis",
                "I couldn't do that: There is no school named 'Atlantis'.",
                "无法办理：更改学校：您提供的信息无效，或在系统中找不到对应的记录（Atlantis）。"),
    "missing": ("demo_leader", _write, "ChangeAllTypesMarkingSubject", {"SubjectIndex": 7},
                "I want to grade a different problem", "我想换一道题阅卷",
                "I need a bit more information to do that: please tell me the new marking subject (problem index, "
                "1 to 10). Just reply with it and I'll continue.",
                "要完成这项操作，我还需要一些信息：请告诉我新的阅卷题号（1 到 10）。直接回复即可，我会继续办理。"),
    "queued": ("demo_leader", _queued, "ChangeAllTypesUploadLimit", {"Limit": 40},
               "Set my upload limit to 40", "上传上限改成40",
               "Your request (change your upload limit: 40) has been sent to our staff for review. They will check "
               "it and apply it; nothing has been changed yet.",
               "您的请求（更改上传上限：40）已提交给工作人员审核。他们核实后会为您办理；目前尚未做任何更改。"),
    "not_in_system": ("nobody_here", None, None, {},
                      "Please change my upload limit to 40.", "请把我的上传上限改成40。",
                      "We cannot find you in the system, so I can't look up your account or change anything. "
                      "Please contact human support.",
                      "系统中找不到您的账户，所以我无法查询或更改任何信息。请联系人工客服。"),
    "guide_citation": ("demo_leader", _guide, None, {"answer": "ANSWER"},
                       "Can I upload after the deadline?", "截止以后还能上传答卷吗？",
                       "ANSWER (Source: user-guide.pdf, page 3)", "ANSWER（来源：user-guide.pdf，第 3 页）"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", list(CASES))
def test_each_reply_kind_is_written_in_the_language_of_the_request(engine, kind, lang):
    sender, script, operation, args, text_en, text_zh, want_en, want_zh = CASES[kind]
    agent, llm = make_agent(engine, max_iterations=1) if script is _queued else make_agent(engine)
    if script is not None:
        script(llm, operation, **args)
    text = text_en if lang == "en" else text_zh
    res = agent.handle(sender, text, turn_key="c:1")
    want = want_en if lang == "en" else want_zh
    if want is not None:
        assert res.reply == want
    if lang == "en":
        assert not HAN.search(res.reply)
    else:  # Chinese, and no English but the user's own values and file names
        leftover = res.reply
        for value in [*map(str, args.values()), "user-guide.pdf", "ANSWER"]:
            leftover = leftover.replace(value, "")
        assert HAN.search(res.reply) and not re.search(r"[A-Za-z]", leftover), res.reply


def test_a_chinese_read_lists_the_rows_with_chinese_labels(engine):
    agent, llm = make_agent(engine)
    _write(llm, "GetTeacherInfoByName", TeacherName="Lena Leader")
    res = agent.handle("demo_admin", "帮我查一下 Lena Leader 的信息", turn_key="c:1")
    first, *rows = res.reply.split("\n")
    assert first == "按姓名查询用户：Lena Leader。"
    assert len(rows) == 1 and rows[0].startswith("- 姓名：Lena Leader，身份：领队，学校：")
    en, llm = make_agent(engine)
    _write(llm, "GetTeacherInfoByName", TeacherName="Lena Leader")
    reply = en.handle("demo_admin", "Show me Lena Leader", turn_key="c:2").reply
    assert reply.startswith("1 user(s) named Lena Leader.\n- name: Lena Leader, role: team leader, school: ")


def test_an_empty_chinese_read_says_nothing_was_found(engine):
    agent, llm = make_agent(engine)
    _write(llm, "GetTeacherInfoByName", TeacherName="王芳")
    res = agent.handle("demo_admin", "查询王芳的信息", turn_key="c:1")
    assert res.outcome == "ok" and res.reply == "按姓名查询用户：王芳。没有找到匹配的记录。"


def test_a_bare_answer_to_a_chinese_question_is_answered_in_chinese(engine):
    agent, llm = make_agent(engine)
    _write(llm, "ChangeAllTypesMarkingSubject", SubjectIndex=5)
    history = [TurnRecord(user_text="我想换一道题阅卷", reply="要完成这项操作……", route="system",
                          operation="ChangeAllTypesMarkingSubject", outcome="refused_missing_args")]
    before = member(engine, "demo_leader")["subject"]
    res = agent.handle("demo_leader", "5", history=history, turn_key="c:2")
    assert res.committed and member(engine, "demo_leader")["subject"] == 5 != before
    assert res.reply == "已完成：更改阅卷题号：5。"


def test_a_chinese_sender_not_in_the_system_gets_chinese_and_nothing_runs(engine):
    agent, llm = make_agent(engine)
    before = db_snapshot(engine)
    res = agent.handle("nobody_here", "我是谁？", turn_key="c:1")
    assert text_language(res.reply) == "zh" and llm.calls == [] and db_snapshot(engine) == before


@pytest.mark.parametrize("question, instructed", [("我的上传上限是多少？", True), ("What is my upload limit?", False)])
def test_a_model_written_answer_is_asked_for_in_the_users_language(sqlite_url, question, instructed):
    """The profile and guide prompts are English: without being told, the model answered Chinese questions
    in English. English prompts stay exactly as they were."""
    from tests.unit.pipeline_support import demo_engine, make_agent, to_guide, to_profile, verdict

    agent, llm = make_agent(demo_engine(sqlite_url))
    to_profile(llm)
    llm.enqueue("executor", {"answer": "30"}).enqueue("verifier", verdict(9))
    agent.handle("demo_leader", question, turn_key="t:1")
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": "It is set in the upload section."}).enqueue("verifier", verdict(9))
    agent.handle("demo_leader", question, turn_key="t:2")
    prompts = [messages[-1][1] for role, messages, _ in llm.calls if role == "executor"]
    assert len(prompts) == 2
    for prompt in prompts:
        assert ("Write the answer in Chinese" in prompt) is instructed
        assert prompt.rstrip().endswith("Write the answer in Chinese (简体中文).") is instructed
