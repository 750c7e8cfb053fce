"""The target check (issue 13): a write whose request names another member as its target is refused
before its dry run, in English and Chinese; names that are argument values, the sender's own name,
parts of longer words and reads are not affected. Real demo SQLite database, scripted model."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from apis.cphos import tables as t
from apis.cphos.demo import T0
from apis.cphos.service import Api
from chops.pipeline.context import TurnContext
from chops.pipeline.grounding import ground_args
from chops.records import TurnRecord
from chops.pipeline.targets import name_candidates, others_named
from chops.pipeline.trace import Trace
from tests.unit.pipeline_support import (call, db_snapshot, demo_engine, make_agent, member, prompt_text, to_system,
                                         verdict)

# Members added to the demo data: (id, nickname, user_name). demo_leader is "Lena Leader".
EXTRA = [(20, "bob_b", "Bob Brown"), (21, "芳芳", "王芳"), (22, "Lincoln", "Abe Lincoln"), (23, "Ann", "Ann Lee"),
         (24, "xiaoming", "李明"), (25, "文", "文"), (26, "Will", "Will Smith")]


@pytest.fixture
def engine(sqlite_url):
    engine = demo_engine(sqlite_url)
    rows = [{"id": i, "p_id": 0, "user_name": name, "school_id": 1, "subject": 1, "status": 1, "type": 1,
             "limit": 10, "create_time": T0, "nickname": nick} for i, nick, name in EXTRA]
    with engine.begin() as conn:
        conn.execute(sa.insert(t.member), rows)
    return engine


def others(engine, nickname: str, text: str, args: dict, history: list[TurnRecord] | None = None) -> list[str]:
    """What the check finds for ``text`` with ``args`` grounded as the executor grounds them."""
    api = Api(engine)
    ctx = TurnContext(nickname=nickname, text=text, profile=api.profile(nickname), history=history or [],
                      trace=Trace())
    return others_named(api, ctx, ground_args(args, ctx.user_texts)[0])


LIMIT, SUBJECT = {"Limit": 40}, {"SubjectIndex": 3}


@pytest.mark.parametrize(("text", "args", "found"), [
    ("Change Bob Brown's upload limit to 40", LIMIT, ["Bob Brown"]),
    ("please set the upload limit of bob brown to 40", LIMIT, ["bob brown"]),  # several words: any case
    ("Set bob_b's upload limit to 40.", LIMIT, ["bob_b"]),  # by nickname
    ("Hello, I hope you are well! My colleague Bob Brown asked me whether you could kindly raise his upload "
     "limit to 40, because he has a lot of papers this week. Thank you so much for your help.", LIMIT, ["Bob Brown"]),
    ("Change the marking subject of Vera Vice to 3", SUBJECT, ["Vera Vice"]),
    ("Move Bob Brown to Riverside School", {"SchoolName": "Riverside School"}, ["Bob Brown"]),
    ("Set Bob Brown's and Vera Vice's upload limits to 40", LIMIT, ["Bob Brown", "Vera Vice"]),
    ("I am demo_admin. Set my upload limit to 40", LIMIT, ["demo_admin"]),
    ("把王芳的阅卷题号改成3", SUBJECT, ["王芳"]),
    ("请把芳芳的上传上限改成40", LIMIT, ["芳芳"]),  # by nickname
    ("您好，麻烦您帮忙把我们学校王芳老师的上传上限调整为四十，非常感谢您的耐心帮助！", LIMIT, ["王芳"]),
    ("帮Bob Brown把学校改成Riverside School", {"SchoolName": "Riverside School"}, ["Bob Brown"]),
    ("请把Vera Vice的阅卷题号改为第三题", SUBJECT, ["Vera Vice"]),
])
def test_a_write_about_another_member_is_caught(engine, text, args, found):
    assert others(engine, "demo_leader", text, args) == found


@pytest.mark.parametrize(("sender", "text", "args"), [
    # A member's name as the argument value that names them.
    ("demo_arbiter", "Make me vice team leader of Lena Leader", {"TeamLeaderName": "Lena Leader"}),
    ("demo_arbiter", "I'd like to become the vice team leader of Bob Brown's team, please.",
     {"TeamLeaderName": "Bob Brown"}),
    ("demo_arbiter", "我想成为王芳的副领队", {"TeamLeaderName": "王芳"}),
    # A member's name inside another argument value (a school named after someone).
    ("demo_admin", "Please add the school Lincoln High in Lakeside", {"SchoolName": "Lincoln High",
                                                                       "AreaName": "Lakeside"}),
    ("demo_admin", "请添加学校王芳中学，地区是Lakeside", {"SchoolName": "王芳中学", "AreaName": "Lakeside"}),
    # The sender's own names.
    ("demo_leader", "I am Lena Leader, please set my upload limit to 40", LIMIT),
    ("demo_leader", "This is demo_leader: set my upload limit to 40", LIMIT),
    ("demo_pending", "I am Pat Pending, please finish my registration, I mark problem 3",
     {"Name": "Pat Pending", "ViewProblem": 3}),
    ("xiaoming", "我是李明，请把我的阅卷题号改成3", SUBJECT),
    # Only part of a longer word, or an everyday word in another case.
    ("demo_leader", "Annabel and Annie told me my upload limit should be 40", LIMIT),
    ("demo_leader", "Bobby Browning says: set my upload limit to 40", LIMIT),
    ("demo_leader", "I will need my upload limit at 40", LIMIT),
    ("demo_leader", "请把我的阅卷题号改成3，文件已经上传了", SUBJECT),  # 文 is a member, 文件 is not
    ("demo_leader", "Set my upload limit to 40", LIMIT),
])
def test_names_that_are_not_another_target_pass(engine, sender, text, args):
    assert others(engine, sender, text, args) == []


def test_the_earlier_messages_of_the_same_request_count(engine):
    asked = TurnRecord(user_text="Bob Brown needs a different upload limit", outcome="refused_missing_args")
    assert others(engine, "demo_leader", "40", LIMIT, [asked]) == ["Bob Brown"]
    # A finished earlier request is not this one: the look-up of Bob Brown does not block my change.
    looked = TurnRecord(user_text="Look up Bob Brown", outcome="ok")
    assert others(engine, "demo_leader", "Set my upload limit to 40", LIMIT, [looked]) == []
    # ... unless the write takes its value from that message ("just do it" after a refusal).
    refused = TurnRecord(user_text="Change Bob Brown's upload limit to 40", outcome="refused_other_person")
    assert others(engine, "demo_leader", "Just do it please", LIMIT, [refused]) == ["Bob Brown"]
    assert others(engine, "demo_leader", "OK, then change mine to 40", LIMIT, [refused]) == []


def test_candidates_are_names_not_a_table_scan():
    cands = name_candidates("Change Bob Brown's limit, 把王芳的题号改成3")
    assert {"Bob Brown", "bob brown", "Bob", "Brown's", "王芳", "王芳的"} <= cands
    assert "Bob Brown's limit, 把王芳的题号改成3" not in cands and "limit, 把" not in cands
    assert name_candidates("把" * 1000) == {"把" * 2, "把" * 3, "把" * 4}


# --- through the agent ---------------------------------------------------------------------------------

def turn(engine, nickname: str, text: str, proposal: dict, score: int = 9):
    """One turn routed to the system with the executor's ``proposal`` and the verifier's ``score``."""
    agent, llm = make_agent(engine)
    to_system(llm)
    llm.enqueue("executor", proposal)
    llm.enqueue("verifier", verdict(score))
    return agent.handle(nickname, text, turn_key="c:1"), llm


def test_a_refused_write_changes_nothing_and_says_why(engine):
    before = db_snapshot(engine)
    res, llm = turn(engine, "demo_leader", "Change Bob Brown's upload limit to 40",
                    call("ChangeAllTypesUploadLimit", Limit=40))
    assert res.outcome == "refused_other_person" and not res.committed and not res.queued
    assert db_snapshot(engine) == before  # members, audit and approval rows all unchanged
    assert res.reply == ("I couldn't do that: I can only make changes to your own account, and your request is "
                         "about Bob Brown. Support staff or an admin can help with another person's account.")
    execute = next(s for s in res.trace["steps"] if s["role"] == "executor")
    assert execute["target"] == "demo_leader" and execute["others_named"] == ["Bob Brown"]
    assert execute["dry_run"] is False and execute["diff"] == []
    assert not any(s["role"] in ("commit", "queue") for s in res.trace["steps"])
    assert "Account changed: the sender's own (demo_leader)" in prompt_text(llm, "verifier")


def test_a_refused_chinese_write_is_answered_in_chinese(engine):
    before = db_snapshot(engine)
    res, _ = turn(engine, "demo_leader", "把王芳的阅卷题号改成3", call("ChangeAllTypesMarkingSubject", SubjectIndex=3))
    assert res.outcome == "refused_other_person" and db_snapshot(engine) == before
    assert res.reply == "无法办理：我只能修改您本人的账户，而您的请求涉及王芳。如需修改他人的账户，请联系工作人员或管理员。"


def test_a_rejected_refusal_is_neither_committed_nor_queued(engine):
    before = db_snapshot(engine)
    agent, llm = make_agent(engine)
    for _ in range(2):  # the same attempt twice, then the loop stops early
        to_system(llm)
        llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", verdict(2, "the request is about someone else"))
    res = agent.handle("demo_leader", "Please set bob_b's upload limit to 40", turn_key="c:1")
    assert res.outcome == "refused_other_person" and not res.queued and db_snapshot(engine) == before
    assert "bob_b" in res.reply


def test_a_member_named_as_the_argument_is_carried_out(engine):
    res, _ = turn(engine, "demo_arbiter", "Make me vice team leader of Bob Brown",
                  call("MakeAllTypesToBeSubCoach", TeamLeaderName="Bob Brown"))
    assert res.committed and member(engine, "demo_arbiter")["p_id"] == 20
    assert member(engine, "bob_b")["type"] == 1  # Bob Brown's own row is untouched


def test_reads_naming_a_member_are_not_affected(engine):
    res, llm = turn(engine, "demo_admin", "Which users are at Bruno Busy's school, Lakeside Academy?",
                    call("GetTeacherInfoBySchoolName", SchoolName="Lakeside Academy"))
    assert res.outcome == "ok" and "Bruno Busy" in res.reply
    execute = next(s for s in res.trace["steps"] if s["role"] == "executor")
    assert execute["target"] is None and execute["others_named"] == []
    assert "Account changed" not in prompt_text(llm, "verifier")


def test_every_write_tells_the_verifier_whose_account_changes(engine):
    res, llm = turn(engine, "demo_leader", "Set my upload limit to 40", call("ChangeAllTypesUploadLimit", Limit=40))
    assert res.committed and member(engine, "demo_leader")["limit"] == 40
    assert "Account changed: the sender's own (demo_leader)" in prompt_text(llm, "verifier")
