"""The runner with a fake agent on the project's demo data: isolation between cases, resume after
an interruption, a crashing case recorded with its traceback, a changed config refused."""

from __future__ import annotations

import csv
import json
import re

import pytest
import sqlalchemy as sa

from apis.cphos import tables as t
from apis.cphos.db import init_schema
from apis.cphos.loaders import seed_demo
from chops.llm import LLMError, ScriptedLLM
from chops.records import TurnResult
from chops.settings import get_settings
from eval.casework import EvalAbort
from eval.config import EvalConfig
from eval.runner import RESULTS, ResultLog, RunMismatch, run_eval

SYSTEM_COLS = ["nickname", "question_or_request", "correct_reply", "others", "src_row", "group_id", "category",
               "gold_api", "gold_args", "outcome", "expected_effect"]
GUIDE_COLS = ["nickname", "questions", "answer", "other infos", "src_row", "group_id", "category"]


def demo_loader(engine, _dataset_dir):
    init_schema(engine)
    seed_demo(engine)


def write_dataset(root, system_rows, guide_rows):
    (root / "qa").mkdir(parents=True)
    (root / "database").mkdir()
    for name, cols, rows in (("system.csv", SYSTEM_COLS, system_rows), ("guide.csv", GUIDE_COLS, guide_rows)):
        with (root / "qa" / name).open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(cols)
            w.writerows(rows)
    return root


def srow(n, text, outcome, effect):
    return ["demo_leader", text, "ok", "", n, f"SYS-{n}", "system_mutation_ok", "ChangeAllTypesUploadLimit",
            '{"Limit": 40}', outcome, effect]


class FakeAgent:
    """Writes the demo leader's upload limit when told "limit N"; raises on "boom"; records the texts."""

    calls: list[str] = []

    def __init__(self, api, llm, settings, index, **_):
        self.engine = api.engine

    def handle(self, nickname, text, *, history=(), turn_key, **_):
        FakeAgent.calls.append(text)
        if "boom" in text:
            raise RuntimeError("the agent fell over")
        with self.engine.connect() as conn:  # the state this case starts from
            limit = conn.execute(sa.select(t.member.c.limit).where(t.member.c.nickname == nickname)).scalar()
        if m := re.search(r"limit (\d+)", text):
            with self.engine.begin() as conn:
                conn.execute(t.member.update().where(t.member.c.nickname == nickname).values(limit=int(m[1])))
            return TurnResult(reply=f"was {limit}", route="system", operation="ChangeAllTypesUploadLimit",
                              outcome="ok", committed=True, iterations=1)
        return TurnResult(reply=f"limit is {limit}", route="system", outcome="ok", iterations=1)


@pytest.fixture
def dataset(tmp_path):
    FakeAgent.calls = []
    rows = [srow(1, "limit 40", "ok", "cmf_tp_member[id=2].limit=40"),
            srow(2, "what is my limit", "ok", "none"),  # must see the pristine 20, not case 1's 40
            srow(3, "boom", "ok", "none"),
            srow(4, "limit 40 please", "ok", "cmf_tp_member[id=2].limit=40")]
    guide = [["demo_leader", "Can I upload late?", "No.", "", 1, "GUI-1", "guide"],
             ["demo_leader", "Can I upload late?", "No.", "", 2, "GUI-1", "guide"]]  # a duplicate row
    return write_dataset(tmp_path / "ds", rows, guide)


def run(dataset, out, cfg=None, llm=None, **kw):
    llm = llm or ScriptedLLM()
    for _ in range(4):
        llm.enqueue("judge", {"key_fact": "no", "same": True})
    return run_eval(cfg or EvalConfig(), dataset, out, base_settings=get_settings(), llm=llm, index=object(),
                    agent_factory=FakeAgent, loader=demo_loader, progress=False, **kw)


def test_cases_are_isolated_and_graded_by_db_state(dataset, tmp_path):
    recs = {r["case_id"]: r for r in run(dataset, tmp_path / "out")}
    assert set(recs) == {"system:1", "system:2", "system:3", "system:4", "guide:1"}  # duplicate dropped
    assert recs["system:1"]["passed"] and recs["system:1"]["diff"] == [
        {"op": "update", "table": "cmf_tp_member", "key": {"id": 2}, "field": "limit", "before": 20, "after": 40}]
    assert recs["system:2"]["reply"] == "limit is 20" and recs["system:2"]["diff"] == [] and recs["system:2"]["passed"]
    assert recs["system:4"]["reply"] == "was 20" and recs["system:4"]["passed"]
    assert recs["guide:1"]["passed"] and recs["guide:1"]["grade"]["judge_reason"] == "key fact 'no' stated in the answer"


def test_a_crash_is_a_failed_case_with_its_traceback(dataset, tmp_path):
    recs = {r["case_id"]: r for r in run(dataset, tmp_path / "out")}
    boom = recs["system:3"]
    assert boom["passed"] is False and boom["error_code"] == "crash"
    assert "RuntimeError: the agent fell over" in boom["error"] and "Traceback" in boom["error"]
    assert recs["system:4"]["passed"]  # the run went on


def test_resume_after_interruption_runs_only_the_rest(dataset, tmp_path):
    out = tmp_path / "out"
    seen = []

    def interrupt(rec):
        seen.append(rec["key"])
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(dataset, out, on_record=interrupt)
    assert [r["key"] for r in ResultLog(out / RESULTS).read()] == seen
    with (out / RESULTS).open("a") as fh:
        fh.write('{"key": "system:3#1", "cut off mid-wri')  # a line torn by the interruption
    FakeAgent.calls = []
    recs = run(dataset, out)
    assert sorted(FakeAgent.calls) == ["Can I upload late?", "boom", "limit 40 please"]
    keys = [r["key"] for r in ResultLog(out / RESULTS).read()]  # the torn line is gone, nothing lost
    assert sorted(keys) == sorted(set(keys)) == sorted(r["key"] for r in recs) and len(keys) == 5
    FakeAgent.calls = []
    assert len(run(dataset, out)) == 5 and FakeAgent.calls == []  # finished: nothing re-runs


def test_retry_errors_reruns_only_crashed_cases(dataset, tmp_path):
    out = tmp_path / "out"
    run(dataset, out)
    FakeAgent.calls = []
    recs = run(dataset, out, retry_errors=True)
    assert FakeAgent.calls == ["boom"] and len(recs) == 5


def test_trials_and_workers(dataset, tmp_path):
    cfg = EvalConfig(trials=2, workers=2, only="system")
    recs = run(dataset, tmp_path / "out", cfg=cfg)
    assert sorted(r["key"] for r in recs) == sorted(f"system:{i}#{k}" for i in range(1, 5) for k in (1, 2))
    assert all(r["passed"] for r in recs if r["case_id"] != "system:3")


def test_a_different_config_in_the_same_out_dir_is_refused(dataset, tmp_path):
    run(dataset, tmp_path / "out", cfg=EvalConfig(only="system"))
    with pytest.raises(RunMismatch):
        run(dataset, tmp_path / "out", cfg=EvalConfig(only="system", architecture="ce_1level"))
    with pytest.raises(RunMismatch):
        run(dataset, tmp_path / "out", cfg=EvalConfig(only="system", settings={"max_iterations": 2}))


def test_a_smoke_run_grows_into_the_full_run_in_place(dataset, tmp_path):
    assert len(run(dataset, tmp_path / "out", cfg=EvalConfig(limit=1))) == 2
    FakeAgent.calls = []
    assert len(run(dataset, tmp_path / "out")) == 5
    assert len(FakeAgent.calls) == 3  # system:1 and guide:1 were not run again


def test_fatal_model_error_stops_the_run_resumably(dataset, tmp_path):
    class Broken(FakeAgent):
        def handle(self, nickname, text, *, history=(), turn_key, **_):
            raise LLMError("not_installed", "no model file")  # the agent raises model errors

    with pytest.raises(EvalAbort):
        run_eval(EvalConfig(), dataset, tmp_path / "out", base_settings=get_settings(), llm=ScriptedLLM(),
                 index=object(), agent_factory=Broken, loader=demo_loader, progress=False)
    assert ResultLog(tmp_path / "out" / RESULTS).read() == []
    meta = json.loads((tmp_path / "out" / "run.json").read_text())
    assert meta["architecture"] == "cev_2level" and meta["identity"]["judge"] is True


class CostlyAgent(FakeAgent):
    """Makes the model calls its architecture would: one executor call, plus classifier/verifier."""

    def __init__(self, api, llm, settings, index, **_):
        super().__init__(api, llm, settings, index)
        self.llm, self.arch = llm, settings.architecture

    def handle(self, nickname, text, *, history=(), turn_key, **_):
        roles = ["executor"] if self.arch == "executor_only" else ["classifier", "executor"]
        roles += ["verifier"] if self.arch.startswith("cev") else []
        for role in roles:
            self.llm.text(role, [("user", "x" * 400)])
        return super().handle(nickname, text, history=history, turn_key=turn_key)


def test_ablation_runs_every_architecture_on_the_same_cases(dataset, tmp_path):
    from eval.ablation import run_ablation

    llm = ScriptedLLM()
    for role, n in (("executor", 16), ("classifier", 12), ("verifier", 8)):
        for _ in range(n):
            llm.enqueue(role, "y" * 40)
    out = tmp_path / "abl"
    summaries = run_ablation(EvalConfig(only="system"), dataset, out, base_settings=get_settings(), llm=llm,
                             index=object(), agent_factory=CostlyAgent, loader=demo_loader, progress=False)
    assert [s["architecture"] for s in summaries] == ["executor_only", "ce_1level", "cev_1level", "cev_2level"]
    rel = {s["architecture"]: s["relative_cost"] for s in summaries}
    assert rel["executor_only"] == 1.0 and rel["ce_1level"] == pytest.approx(2.0, rel=0.01)
    assert rel["cev_2level"] == pytest.approx(3.0, rel=0.01)
    assert all(s["acc_sys"] == 0.75 for s in summaries)  # the same four cases, one crashes each time
    table = (out / "ablation.md").read_text()
    assert "| cev_1level | 75.0 |" in table and (out / "accuracy_vs_cost.png").is_file()
    assert (out / "cev_2level" / "report.md").is_file() and llm.pending() == {}


def test_regrade_rejudges_only_the_judged_answers_in_place(dataset, tmp_path):
    from eval.regrade import regrade_run

    out = tmp_path / "out"
    before = {r["key"]: r for r in run(dataset, out)}
    assert before["guide:1#1"]["passed"]
    llm = ScriptedLLM().enqueue("judge", {"key_fact": "no", "same": False})
    settings = get_settings().model_copy(update={"roles": get_settings().roles.model_copy(
        update={"judge": get_settings().roles.judge.model_copy(update={"model": "judge-v2"})})})
    after = {r["key"]: r for r in regrade_run(out, settings, llm=llm, progress=False)}
    assert not after["guide:1#1"]["passed"]
    assert after["guide:1#1"]["grade"]["judge_reason"] == "key fact 'no' not stated in the answer"
    assert after["guide:1#1"]["judge_calls"]["calls"] == 1 and not any(llm.pending().values())
    assert {k: after[k] for k in after if k != "guide:1#1"} == {k: before[k] for k in before if k != "guide:1#1"}
    assert {r["key"]: r for r in ResultLog(out / RESULTS).read()} == after
    meta = json.loads((out / "run.json").read_text())
    assert meta["roles"]["judge"]["model"] == "judge-v2" and meta["regraded"]["records"] == 1
