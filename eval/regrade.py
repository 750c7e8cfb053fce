"""Re-judging a finished run: the judge (its prompt or its model) changes without re-running the
pipeline. Every guide / basic-info record graded by the judge is graded again with the current
``judge`` role; system rows (graded by database state) are left as they are.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from eval.compare import load_run
from eval.dataset import Case
from eval.grading import grade_answer
from eval.runner import RESULTS, RUN_META, ResultLog, role_meta

JUDGED = ("judge", "ungraded")


def regrade_run(run_dir: Path, settings: Any, *, llm: Any = None, progress: bool = True) -> list[dict]:
    """Re-judge the judged records of ``run_dir`` in place (atomic rewrite of ``results.jsonl``);
    ``run.json`` records which judge graded them. Returns all records."""
    from tqdm import tqdm

    from chops.llm import Ledger

    run_dir = Path(run_dir)
    meta, records = load_run(run_dir)
    own_llm = llm is None
    if own_llm:
        from chops.llm import build_llm

        llm = build_llm(settings)
    fields = set(Case.model_fields)
    todo = [r for r in records if not r.get("error") and (r.get("grade") or {}).get("method") in JUDGED]
    try:
        for rec in tqdm(todo, disable=not progress, unit="case"):
            case = Case(**{k: v for k, v in rec.items() if k in fields})
            ledger = Ledger()
            grade = grade_answer(case, rec.get("reply") or "", llm, ledger=ledger)
            rec.update(grade=grade.model_dump(), passed=grade.passed, judge_calls=ledger.totals())
    finally:
        if own_llm and hasattr(llm, "close"):
            llm.close()
    ResultLog(run_dir / RESULTS).rewrite(records)
    meta["roles"]["judge"] = role_meta(settings, "judge")
    meta["regraded"] = {"at": time.strftime("%Y-%m-%dT%H:%M:%S"), "records": len(todo)}
    (run_dir / RUN_META).write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return records
