"""The whole ``chops eval`` command on a few CPHOS rows: the real pipeline, the real database dump,
the real guide PDFs and index; only the model is scripted — callables that decide each reply from
the prompt they are sent, as a (very literal) model would."""

from __future__ import annotations

import csv
import json
import re

import pytest
from click.testing import CliRunner

from chops.cli import main
from chops.llm import ScriptedLLM
from eval.grading import token_f1

# Rows picked from the dataset at run time (src_row): a write, a refused write, a missing argument,
# a profile question, and a guide question.
SYSTEM_ROWS = {"21", "13", "17"}
GUIDE_ROWS = {"1", "50"}


def subset_qa(cphos_dir, dest):
    """A QA directory with the chosen rows of the dataset (written to a temp dir, never the repo)."""
    dest.mkdir()
    for name, keep in (("system.csv", SYSTEM_ROWS), ("guide.csv", GUIDE_ROWS)):
        with (cphos_dir / "qa" / name).open(newline="") as fh:
            reader = csv.DictReader(fh)
            rows = [r for r in reader if r["src_row"] in keep]
            fields = reader.fieldnames
        with (dest / name).open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
    return dest


def _request(messages) -> str:
    """The user's request as the pipeline quotes it ("Message: ..." / "Question: ...")."""
    found = re.findall(r"^(?:Message|Question): (.*)$", messages[-1][1], re.M)
    return found[-1].lower() if found else ""


def respond(messages, schema):
    """A literal-minded model: keyword rules over the prompt, per requested schema."""
    name, text = schema.__name__, _request(messages)
    everything = "\n".join(c for _, c in messages)
    if name == "SmallTalkGate":
        return {"route": "about_the_platform"}
    if name == "Level1Decision":
        return {"route": "own_fact" if "problems left" in text or "remaining problems" in text else "something_else"}
    if name == "Level2Decision":
        return {"route": "answer_from_guide" if "answer sheets" in text else "do_operation"}
    if name == "OneLevelDecision":
        return {"route": "own_fact" if "problems left" in text else "answer_from_guide" if "answer sheets" in text
                else "do_operation"}
    if name == "ProfileAnswer":
        left = re.search(r"problems left to mark in the current exam: (\d+)", everything, re.I)
        n = int(left[1]) if left else -1
        return {"answer": "There are no problems left for you to mark." if n == 0 else f"You have {n} problems left."}
    if name == "GuideAnswer":
        late = "deadline" in everything.lower()
        return {"source": 1, "answer": "No, not after the deadline." if late else "I could not find this."}
    if name == "AnswerOrOperation" and not re.search(r"subject|problem i view", text):
        return {"call": {"operation": "AnswerDirectly", "answer": "No, not after the deadline."}}
    if name in ("OperationPlan", "AnswerOrOperation"):
        subject = re.search(r"(?:subject|problem)[^0-9]*(\d+)", text)
        call = {"operation": "ChangeAllTypesMarkingSubject", "args": {"SubjectIndex": int(subject[1]) if subject else None}}
        return {"calls": [call]} if name == "OperationPlan" else {"call": call}
    if name == "Verdict":
        return {"reason": "The proposal matches the request.", "score": 9}
    if name == "JudgeVerdict":
        ref = re.search(r"Reference answer: (.*)", everything)[1]
        got = re.search(r"Assistant's answer: (.*)", everything)[1]
        ok = token_f1(got, ref) >= 0.5 or (ref.strip().lower().startswith("no") and got.lower().startswith("no"))
        return {"key_fact": ref[:20], "same": ok}
    raise AssertionError(f"unscripted schema {name}")


def scripted_llm() -> ScriptedLLM:
    llm = ScriptedLLM()
    for role in ("classifier", "executor", "verifier", "chooser", "judge"):
        for _ in range(60):
            llm.enqueue(role, respond)
    return llm


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("CHOPS_DATA_DIR", str(tmp_path / "data"))  # the guide index goes here
    llm = scripted_llm()
    monkeypatch.setattr("chops.llm.build_llm", lambda settings: llm)
    return llm


def test_eval_command_end_to_end_then_resume_and_compare(cphos_dir, tmp_path, env):
    qa = subset_qa(cphos_dir, tmp_path / "qa")
    out = tmp_path / "run"
    args = ["eval", "--dataset", str(cphos_dir), "--qa", str(qa), "--out", str(out), "--quiet"]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    recs = {r["case_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert set(recs) == {"system:21", "system:13", "system:17", "guide:1", "guide:50"}
    assert all(r["error"] is None for r in recs.values()), [r["error"] for r in recs.values()]
    # A real committed write, graded by the database state of its own copy.
    write = recs["system:21"]
    assert write["outcome"] == "ok" and write["committed"] and write["passed"]
    assert write["diff"] == [{"op": "update", "table": "cmf_tp_member", "key": {"id": 706}, "field": "subject",
                              "before": 5, "after": 9}]
    # User 98 has unfinished marking: refused, nothing written.
    assert recs["system:13"]["outcome"] == "refused_precondition" and recs["system:13"]["passed"]
    # "Please change my marking subject." -> the scripted model passes null; the Api refuses.
    assert recs["system:17"]["outcome"] == "refused_missing_args" and recs["system:17"]["diff"] == []
    assert recs["guide:1"]["route"] == "basic_info" and recs["guide:1"]["passed"]
    assert recs["guide:50"]["route"] == "guide" and recs["guide:50"]["grade"]["judge_reason"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["requests"] == 5 and summary["n_sys"] == 3 and summary["n_file"] == 2
    assert summary["by_role"]["classifier"]["calls"] > 0 and summary["calls_per_request"] > 0
    report = (out / "report.md").read_text()
    assert "Acc_sys" in report and "Table 6" in report
    assert (out / "accuracy_vs_cost.png").stat().st_size > 1000 and (out / "iterations.png").is_file()

    # The same command again: everything is recorded, nothing re-runs (no model calls left unused).
    calls_before = len(env.calls)
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0 and len(env.calls) == calls_before

    res = CliRunner().invoke(main, ["eval", "compare", str(out), str(out)], catch_exceptions=False)
    assert res.exit_code == 0 and "acc_sys" in res.output and "passed in A, failed in B (0)" in res.output


def test_eval_ablate_command_side_by_side(cphos_dir, tmp_path, env):
    qa = subset_qa(cphos_dir, tmp_path / "qa")
    out = tmp_path / "abl"
    res = CliRunner().invoke(main, ["eval", "ablate", "--dataset", str(cphos_dir), "--qa", str(qa), "--only",
                                    "system", "--architectures", "cev_2level,executor_only", "--out", str(out),
                                    "--quiet"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    summaries = {s["architecture"]: s for s in json.loads((out / "ablation.json").read_text())}
    assert set(summaries) == {"executor_only", "cev_2level"}
    assert summaries["executor_only"]["relative_cost"] == 1.0
    assert summaries["cev_2level"]["relative_cost"] > 1.0  # classifier + verifier calls on top
    assert summaries["executor_only"]["by_role"].keys() == {"executor"}
    assert "| executor_only |" in res.output and (out / "accuracy_vs_cost.png").is_file()


def test_eval_ablate_configurations_run_as_streams_over_orders(cphos_dir, tmp_path, env):
    qa = subset_qa(cphos_dir, tmp_path / "qa")
    out = tmp_path / "eco"
    args = ["eval", "ablate", "--dataset", str(cphos_dir), "--qa", str(qa), "--only", "system",
            "--configurations", "1.5b,hierarchy+demos", "--orders", "2", "--out", str(out), "--quiet"]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    summaries = {s["configuration"]: s for s in json.loads((out / "ecoassistant.json").read_text())}
    assert set(summaries) == {"1.5b", "hierarchy+demos"} and summaries["1.5b"]["relative_cost"] == 1.0
    assert summaries["1.5b"]["demonstrations"]["per_request"] == 0
    assert (out / "hierarchy+demos" / "order-2" / "work" / "memory.db").is_file()
    assert not (out / "1.5b" / "work" / "memory.db").exists() and not (out / "1.5b" / "order-2").exists()
    orders = [[json.loads(line)["case_id"] for line in (out / "hierarchy+demos" / f"order-{n}" / "results.jsonl").open()]
              for n in (1, 2)]
    assert sorted(orders[0]) == sorted(orders[1])  # the same cases, each order its own shuffle
    assert "| hierarchy+demos |" in res.output and (out / "stream.png").stat().st_size > 1000
    bad = CliRunner().invoke(main, args[:-5] + ["--configurations", "huge", "--out", str(out)])
    assert bad.exit_code == 2 and "unknown configuration" in bad.output
