"""``chops ask`` end to end in-process: real SQLite demo database, scripted model."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import chops.llm
from chops.cli import main
from chops.llm import ScriptedLLM
from tests.unit.pipeline_support import call, demo_engine, member, small_talk, to_system, verdict


@pytest.fixture
def env(sqlite_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CHOPS_DATA_DIR", str(tmp_path))
    engine = demo_engine(sqlite_url)
    llm = ScriptedLLM()
    monkeypatch.setattr(chops.llm, "build_llm", lambda settings: llm)
    return sqlite_url, engine, llm


def ask(url: str, *args: str):
    result = CliRunner().invoke(main, ["ask", *args, "--database-url", url])
    return result


def test_ask_prints_the_reply_and_the_conversation_to_continue(env):
    url, engine, llm = env
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesMarkingSubject", SubjectIndex=None))
    llm.enqueue("verifier", verdict(9))
    first = ask(url, "--as", "demo_leader", "--json", "I want to grade another problem")
    assert first.exit_code == 0, first.output
    out = json.loads(first.stdout)
    assert out["outcome"] == "refused_missing_args" and out["seq"] == 1
    for key in ("route", "operation", "args", "committed", "iterations", "chars_in", "chars_out", "cost", "trace"):
        assert key in out
    cid = out["conversation_id"]

    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesMarkingSubject", SubjectIndex=7))
    llm.enqueue("verifier", verdict(9))
    second = ask(url, "--as", "demo_leader", "--conversation", cid, "make it 7")
    assert second.exit_code == 0, second.output
    assert second.stdout.strip() == "Done: Your marking subject is now 7."
    assert f"--conversation {cid}" in second.stderr
    assert member(engine, "demo_leader")["subject"] == 7
    # The second turn saw the first one.
    assert "I want to grade another problem" in "\n".join(c for _, c in llm.calls[-2][1])


def test_ask_refuses_someone_elses_conversation_and_unknown_ids(env):
    url, _, llm = env
    res = ask(url, "--as", "nobody_here", "--json", "hello")
    assert res.exit_code == 0 and json.loads(res.stdout)["route"] == "not_in_system"
    cid = json.loads(res.stdout)["conversation_id"]
    other = ask(url, "--as", "demo_leader", "--conversation", cid, "hello")
    assert other.exit_code != 0 and "another user" in other.output
    missing = ask(url, "--as", "demo_leader", "--conversation", "no-such-id", "hello")
    assert missing.exit_code != 0 and "no conversation" in missing.output
    assert llm.calls == []


def test_a_model_outage_prints_model_unavailable_and_exits_1_with_nothing_written(env):
    from chops.llm import LLMError

    url, engine, llm = env
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40))
    llm.enqueue("verifier", LLMError("timeout", "the model stayed busy"))
    res = ask(url, "--as", "demo_leader", "Set my upload limit to 40")
    assert res.exit_code == 1 and "model_unavailable" in res.stderr and "nothing was changed" in res.stderr
    assert member(engine, "demo_leader")["limit"] == 20
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM chops_turn").scalar() == 0


def test_ask_in_a_conversation_staff_have_is_held_for_them(env):
    from chops.desk import Desk

    url, engine, llm = env
    small_talk(llm, "ask_for_person")
    first = ask(url, "--as", "demo_leader", "--json", "Please let me talk to a person")
    out = json.loads(first.stdout)
    assert out["route"] == "handoff"
    calls = len(llm.calls)
    held = ask(url, "--as", "demo_leader", "--conversation", out["conversation_id"], "Are you there?")
    assert held.exit_code == 0 and "held for staff" in held.stdout and "waiting" in held.stdout
    assert len(llm.calls) == calls  # no model call
    Desk(engine).close(out["conversation_id"], "erin")
    closed = ask(url, "--as", "demo_leader", "--conversation", out["conversation_id"], "Hello?")
    assert closed.exit_code != 0 and "conversation_closed" in closed.output


def test_the_cli_guide_index_loads_on_first_use_and_stands_in_empty_when_it_cannot(tmp_path):
    # `chops ask` hands the agent a lazy index; the retriever asks it for the current version.
    from chops.cli.ask import _LazyIndex
    from chops.settings import REPO_ROOT, get_settings

    loaded = _LazyIndex(get_settings(data_dir=tmp_path / "a", guides_dir=REPO_ROOT / "guides")).current()
    assert loaded.search("Can I upload answer sheets after the deadline?", k=1)
    missing = _LazyIndex(get_settings(data_dir=tmp_path / "b", guides_dir=tmp_path / "none")).current()
    assert missing.version is None and missing.search("anything") == []
