"""The conversation eval end to end on a made-up mini shop: a real ConversationService and store on each task's
own database copy, a stub agent that looks up, asks for the yes and commits, scripted users from a made-up
users file; the records, summary.json, report.md/png, end states, resuming after a crash, and the CLI."""

from __future__ import annotations

import json

import pytest

from chops.records import TurnResult
from eval.conversations.report import pass_hat, unconfirmed, write_report
from eval.conversations.runner import ConversationEvalConfig, run_conversations
from eval.conversations.session import turn_record
from tests.unit.convo_support import MiniPack, stub_service_factory, write_dump, write_task_files


@pytest.fixture
def files(tmp_path):
    tasks, users = write_task_files(tmp_path / "pack" / "tasks")
    return {"tasks": tasks, "users": users, "dump": write_dump(tmp_path / "pack" / "database")}


def cfg(files, **kw) -> ConversationEvalConfig:
    return ConversationEvalConfig(domain="minishop", **files, **kw)


def run(files, out, made=None, careless=False, **kw):
    return run_conversations(cfg(files, **kw), out, pack=MiniPack(), progress=False,
                             make_service=stub_service_factory(careless=careless, made=made))


def test_every_task_runs_as_a_conversation_and_is_graded(files, tmp_path):
    out = tmp_path / "run"
    records = {r["task_id"]: r for r in run(files, out)}
    assert list(records) == ["cancel", "person", "boom", "wrong", "stuck"]

    ok = records["cancel"]
    assert ok["passed"] and ok["reward"] == 1.0 and ok["ended"] == "stop" and ok["error"] is None
    assert [m["role"] for m in ok["transcript"]] == ["agent", "user", "agent", "user", "agent", "user"]
    assert ok["transcript"][0]["text"] == "Hi! How can I help you today?"  # the agent speaks first
    assert ok["transcript"][-1]["text"] == "No, thanks!"  # the customer's goodbye needs no answer
    first, second = ok["turns"]
    assert first["pending"] and not first["committed"] and first["outcome"] == "pending_confirmation"
    assert second["committed"] and second["confirmed"] and not second["pending"]
    assert [c["operation"] for c in ok["calls"]] == ["get_order_details", "cancel_pending_order"]
    assert not any(c["wrong_args"] for c in ok["calls"]) and ok["user_id"] == "ann_lee_1"
    assert ok["user_rules"] == ["opening", "yes", "bye"] and ok["n_turns"] == 2 and ok["model_calls"] == 4
    assert ok["cost_usd"] == pytest.approx(0.003) and ok["steps"] == 2  # the look-up, then the commit
    assert ok["grade"]["communicate_ok"] and ok["grade"]["db_ok"]

    person = records["person"]
    assert person["passed"] and person["ended"] == "transfer" and person["turns"][0]["route"] == "handoff"
    assert {"operation": "transfer_to_human_agents", "skipped": "unknown operation"} in person["reference_replay"]

    boom = records["boom"]
    assert not boom["passed"] and boom["error_code"] == "crash" and "the stub agent blew up" in boom["error"]
    assert boom["transcript"][-1] == {"role": "user", "text": "Please explode."}  # what happened is kept

    wrong = records["wrong"]
    assert not wrong["passed"] and wrong["ended"] == "stop"
    assert not wrong["grade"]["db_ok"] and wrong["grade"]["missing_info"] == ["1234.50"]
    assert {d["path"] for d in wrong["grade"]["diff"]} >= {"/orders/#M1/status", "/orders/#M2/status"}
    assert wrong["calls"][-1]["wrong_args"]  # cancelled #M1, the reference cancels #M2

    stuck = records["stuck"]
    assert stuck["ended"] == "max_turns" and stuck["reward"] == 0.0 and stuck["n_turns"] == 2

    # Each conversation's end state, in the pack's export format.
    state = json.loads((out / "end_states" / "cancel.json").read_text())
    assert state["orders"]["#M1"]["status"] == "cancelled" and state["orders"]["#M2"]["status"] == "pending"
    assert not (out / "end_states" / "boom.json").exists()



def test_a_turn_cap_ends_a_looping_conversation_sooner(files, tmp_path):
    records = {r["task_id"]: r for r in run(files, tmp_path / "run", max_turns=2, task_ids=["stuck", "cancel"])}
    assert records["stuck"]["ended"] == "max_turns" and records["stuck"]["n_turns"] == 1
    # Its "yes" was its 2nd message, so its last: unanswered, nothing committed.
    assert not records["cancel"]["passed"] and records["cancel"]["n_turns"] == 1
    assert json.loads((tmp_path / "run" / "run.json").read_text())["identity"]["max_turns"] == 2  # kept on resume

def test_summary_report_and_plot(files, tmp_path):
    out = tmp_path / "run"
    records = run(files, out, trials=2, workers=2, end_states="all")
    assert len(records) == 10
    summary = write_report(out, records, trials=2)
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == json.loads(json.dumps(summary))
    assert summary["pass_1"] == 0.4 and summary["pass_k"] == 0.4 and summary["pass_hat"] == {"1": 0.4, "2": 0.4}
    assert summary["unconfirmed_writes"] == 0 and summary["committed_writes"] == 4 and summary["errors"] == 2
    assert summary["ended"] == {"stop": 4, "transfer": 2, "None": 2, "max_turns": 2}
    task = summary["per_task"]["cancel"]
    assert (task["trials"], task["passes"], task["reward"], task["db_ok"], task["turns"]) == (2, 2, 1.0, 1.0, 2)
    assert task["time_s"] > 0 and summary["per_task"]["wrong"]["communicate_ok"] == 0.0
    assert summary["per_operation"]["cancel_pending_order"] == {"called": 4, "refused": 0, "wrong_args": 2,
                                                               "not_in_reference": 0}
    assert summary["per_operation"]["get_order_details"]["called"] == 6  # cancel, wrong, stuck
    assert summary["steps"]["total"] > 0 and summary["cost"]["total_usd"] > 0
    assert summary["latency"]["turn_mean_s"] > 0 and summary["model_calls"]["total"] > 0
    report = (out / "report.md").read_text()
    assert "| pass^2 | 0.4 |" in report and "| cancel | 2/2 |" in report and "### wrong#1" in report
    assert "`/orders/#M2/status`: expected `cancelled`, got `pending`" in report
    assert (out / "report.png").read_bytes()[:4] == b"\x89PNG"
    assert {p.name for p in (out / "end_states").iterdir()} >= {"cancel.json", "cancel.trial2.json"}


def test_a_write_committed_without_the_customers_yes_is_counted(files, tmp_path):
    records = run(files, tmp_path / "run", careless=True, task_ids=["cancel"])
    summary = write_report(tmp_path / "run", records, trials=1)
    assert summary["unconfirmed_writes"] == 1 and summary["unconfirmed"] == [
        {"key": "cancel#1", "turn": 0, "operations": ["cancel_pending_order"]}]


def test_a_verified_no_op_is_no_unconfirmed_write():
    # "Your default address already is that one": committed without a question, and nothing changed.
    noop = TurnResult(reply="Done: nothing needed to change.", route="system", operation="modify_user_address",
                      outcome="ok_noop", committed=True, trace={"steps": [{"role": "commit", "diff": []}]})
    changed = TurnResult(reply="Done.", route="system", operation="modify_user_address", outcome="ok",
                         committed=True, trace={"steps": [{"role": "commit", "diff": [{"table": "t"}]}]})
    turns = [turn_record("ship it to my home", r, 0.1) for r in (noop, changed)]
    assert [t["changed"] for t in turns] == [False, True]
    assert unconfirmed([{"key": "k#1", "turns": turns}]) == [{"key": "k#1", "turn": 1,
                                                             "operations": ["modify_user_address"]}]


def test_an_interrupted_run_resumes_where_it_stopped(files, tmp_path):
    out, made = tmp_path / "run", []

    def die_after_two(rec):
        if len(made) == 2:
            raise KeyboardInterrupt  # the process is killed after its second record is saved

    with pytest.raises(KeyboardInterrupt):
        run_conversations(cfg(files), out, pack=MiniPack(), progress=False, on_record=die_after_two,
                          make_service=stub_service_factory(made=made))
    lines = (out / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["cancel#1", "person#1"]
    with (out / "results.jsonl").open("a") as fh:
        fh.write('{"key": "boom#1", "task_id": "bo')  # a record torn by the kill
    made.clear()
    records = run(files, out, made=made)
    assert len(made) == 3 and sorted(r["key"] for r in records) == sorted(
        ["cancel#1", "person#1", "boom#1", "wrong#1", "stuck#1"])
    assert len((out / "results.jsonl").read_text().splitlines()) == 5
    made.clear()
    assert len(run(files, out, made=made)) == 5 and made == []  # nothing left to do
    # A crash is retried only on request; more trials extend the run in place.
    made.clear()
    run_conversations(cfg(files), out, pack=MiniPack(), progress=False, retry_errors=True,
                      make_service=stub_service_factory(made=made))
    assert len(made) == 1
    made.clear()
    assert len(run(files, out, made=made, trials=2)) == 10 and len(made) == 5
    assert not list((out / "end_states").glob("*.trial2.json"))  # by default only the first trial's are kept


def test_another_experiment_in_the_same_directory_is_refused(files, tmp_path):
    from eval.runner import RunMismatch

    run(files, tmp_path / "run", task_ids=["person"])
    other = json.loads(files["users"].read_text())
    other["scripts"][1]["opening"] = "A person, please: a human."
    files["users"].write_text(json.dumps(other))
    with pytest.raises(RunMismatch):
        run(files, tmp_path / "run", task_ids=["person"])


def test_pass_hat_is_taus_estimator():
    recs = [{"task_id": "a", "passed": p} for p in (True, True, False, True)] + \
        [{"task_id": "b", "passed": p} for p in (True, False, False, False)]
    assert pass_hat(recs, 1) == pytest.approx((3 / 4 + 1 / 4) / 2)
    assert pass_hat(recs, 2) == pytest.approx((3 / 6 + 0) / 2)
    assert pass_hat(recs, 4) == 0.0 and pass_hat(recs, 5) is None


def test_the_cli_runs_any_task_and_user_files(files, tmp_path, monkeypatch):
    from click.testing import CliRunner

    import chops.domain.pack as packs
    import eval.conversations.wiring as wiring
    from chops.cli import main

    monkeypatch.setattr(packs, "load_pack", lambda name: MiniPack())
    monkeypatch.setattr(wiring, "agent_service_factory", lambda settings, pack, **kw: (stub_service_factory(), None))
    out = tmp_path / "cli-run"
    result = CliRunner().invoke(main, ["eval", "conversations", "--domain", "minishop", "--tasks", str(files["tasks"]),
                                       "--users", str(files["users"]), "--task-ids", "cancel,person", "--trials", "2",
                                       "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "| pass^2 | 1 |" in result.output  # the dump defaulted to the tasks file's ../database
    assert json.loads((out / "summary.json").read_text())["conversations"] == 4
    bad = CliRunner().invoke(main, ["eval", "conversations", "--tasks", str(files["tasks"]), "--out", str(out)])
    assert bad.exit_code == 2 and "--users" in bad.output
    bad = CliRunner().invoke(main, ["eval", "conversations", "--domain", "minishop", "--tasks", str(files["tasks"]),
                                    "--users", str(files["users"]), "--task-ids", "nope", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "no task(s) nope" in bad.output


def test_the_real_agent_with_a_scripted_model_through_the_eval(files, tmp_path):
    """The pipeline agent (built as the CLI builds it) on the mini shop: it looks the order up, describes the
    cancellation and asks; the customer's yes commits it; the eval reads pending and confirmed from the real
    results and the end state passes."""
    from chops.llm import ScriptedLLM
    from chops.settings import get_settings
    from eval.conversations.wiring import agent_service_factory
    from tests.unit.pipeline_support import FakeIndex, call, to_system, verdict

    llm = ScriptedLLM()
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#M1"))
    llm.enqueue("executor", call("cancel_pending_order", order_id="#M1", reason="no longer needed"))
    llm.enqueue("verifier", verdict(9)).enqueue("classifier", {"answer": "yes_go_ahead"})
    make_service, closer = agent_service_factory(get_settings(), MiniPack(), llm=llm, index=FakeIndex())
    assert closer is None  # the caller's LLM is the caller's to close
    [rec] = run_conversations(cfg(files, task_ids=["cancel"]), tmp_path / "run", pack=MiniPack(), progress=False,
                              make_service=make_service)
    assert llm.pending() == {}, rec["transcript"]
    asked, committed = rec["turns"]
    assert asked["pending"] and asked["outcome"] == "pending_confirmation" and not asked["committed"]
    assert [c["operation"] for c in asked["calls"]] == ["get_order_details"]  # the write is only described
    assert committed["committed"] and committed["confirmed"] and committed["operations"] == ["cancel_pending_order"]
    assert rec["grade"]["db_ok"] and rec["ended"] == "stop", rec["transcript"]
    # The agent never said the refund's amount: the end state is right, the conversation still fails.
    assert rec["grade"]["missing_info"] == ["12.50"] and not rec["passed"]
    summary = write_report(tmp_path / "run", [rec], trials=1)
    assert summary["unconfirmed_writes"] == 0 and summary["committed_writes"] == 1
    assert summary["model_calls"]["total"] == 7  # three routing calls, two executor steps, verifier, the yes


def test_the_agents_guides_are_the_packs_policy_alone(tmp_path):
    from chops.settings import get_settings
    from eval.conversations.wiring import guides_folder

    data = tmp_path / "datapack"
    data.mkdir()
    (data / "policy.md").write_text("# Made-up policy\nRefunds go to the original card.\n")
    (data / "README.md").write_text("How the grader works: not for the agent.")

    class WithPolicy(MiniPack):
        def policy_path(self):
            return data / "policy.md"

    settings = get_settings()
    folder = guides_folder(settings, WithPolicy(), work_dir=tmp_path / "work")
    assert folder == tmp_path / "work" / "guides" and [p.name for p in folder.iterdir()] == ["policy.md"]
    assert guides_folder(settings, WithPolicy(), guides_dir=data) == data  # --guides wins
    assert guides_folder(settings, MiniPack(), work_dir=tmp_path / "work") == settings.guides_dir


def test_a_packs_missing_policy_is_an_error_not_another_businesss_guides(tmp_path):
    from chops.settings import get_settings
    from eval.conversations.wiring import guides_folder

    class Lost(MiniPack):
        def policy_path(self):
            return tmp_path / "nowhere" / "policy.md"

    with pytest.raises(FileNotFoundError, match="policy"):
        guides_folder(get_settings(), Lost(), work_dir=tmp_path / "work")


def test_a_model_configuration_error_stops_the_run_and_a_passing_timeout_fails_one_task(files, tmp_path):
    from chops.conversation import ConversationService
    from chops.llm import LLMError
    from chops.store import ConversationStore
    from eval.casework import EvalAbort

    class Failing:
        def __init__(self, code):
            self.code = code

        def handle(self, *a, **kw):
            raise LLMError(self.code, "the model is not there")

    def factory(code):
        return lambda engine, api: ConversationService(ConversationStore(engine, api=api), Failing(code))

    out = tmp_path / "run"
    with pytest.raises(EvalAbort, match="model configuration error"):
        run_conversations(cfg(files), out, pack=MiniPack(), progress=False, make_service=factory("no_api_key"))
    assert not (out / "results.jsonl").exists() or (out / "results.jsonl").read_text() == ""
    records = run_conversations(cfg(files, task_ids=["cancel"]), tmp_path / "run2", pack=MiniPack(), progress=False,
                                make_service=factory("timeout"))
    assert records[0]["error_code"] == "timeout" and not records[0]["passed"]
