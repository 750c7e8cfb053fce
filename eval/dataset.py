"""The QA cases of the CPHOS-dataset, read at run time from ``system.csv`` and ``guide.csv``.

The dataset is not ours: nothing here copies it, the files are read from the directory given on
the command line (columns and annotations: the dataset README, section "QA files").
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

Kind = Literal["system", "guide"]
SYSTEM_FILE, GUIDE_FILE = "system.csv", "guide.csv"

# The route the classifier should pick for each row category (for the route confusion table).
EXPECTED_ROUTE = {
    "basic_info": "basic_info",
    "guide": "guide",
    "not_in_system": "not_in_system",
    "system_query": "system",
    "system_mutation_ok": "system",
    "system_mutation_refused": "system",
}


class DatasetError(ValueError):
    """A QA directory or file that is missing or malformed (code ``eval_dataset``)."""

    code = "eval_dataset"


class Case(BaseModel):
    """One QA row: who asks what, and what a correct turn looks like."""

    case_id: str  # "system:21" / "guide:9" — file kind and the row's src_row, stable across runs
    kind: Kind
    nickname: str
    text: str
    reference: str
    category: str
    group_id: str
    src_row: int
    gold_api: str | None = None
    gold_args: dict[str, Any] | None = None
    outcome: str | None = None
    expected_effect: str | None = None

    @property
    def expected_route(self) -> str | None:
        """The route a correct classifier takes for this row's category."""
        return EXPECTED_ROUTE.get(self.category)

    @property
    def missing_args(self) -> list[str]:
        """Argument names the user did not give (``null`` in ``gold_args``)."""
        return [k for k, v in (self.gold_args or {}).items() if v is None]


def _read(path: Path, required: set[str]) -> list[dict[str, str]]:
    if not path.is_file():
        raise DatasetError(f"QA file not found: {path}")
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = required - set(reader.fieldnames or ())
        if missing:
            raise DatasetError(f"{path.name} lacks columns: {', '.join(sorted(missing))}")
        return list(reader)


def read_system(path: Path) -> list[Case]:
    """The rows of ``system.csv`` as cases (gold api, args, outcome and expected effect kept)."""
    cols = {"nickname", "question_or_request", "correct_reply", "src_row", "group_id", "category",
            "gold_api", "gold_args", "outcome", "expected_effect"}
    cases = []
    for row in _read(path, cols):
        try:
            args = json.loads(row["gold_args"]) if row["gold_args"].strip() else None
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path.name} src_row {row['src_row']}: bad gold_args: {exc}") from None
        cases.append(Case(
            case_id=f"system:{row['src_row']}", kind="system", nickname=row["nickname"],
            text=row["question_or_request"], reference=row["correct_reply"], category=row["category"],
            group_id=row["group_id"], src_row=int(row["src_row"]), gold_api=row["gold_api"] or None,
            gold_args=args, outcome=row["outcome"].strip() or None,
            expected_effect=row["expected_effect"].strip() or "none"))
    return cases


def read_guide(path: Path, *, dedupe: bool = True) -> list[Case]:
    """The rows of ``guide.csv`` as cases.

    With ``dedupe`` a row identical (nickname, question, answer) to an earlier row is dropped:
    rows 52–102 of the original file copy rows 1–51, and with deterministic decoding a copy only
    doubles the cost of a run without adding information. ``dedupe=False`` counts like the paper.
    """
    cols = {"nickname", "questions", "answer", "src_row", "group_id", "category"}
    seen: set[tuple[str, str, str]] = set()
    cases = []
    for row in _read(path, cols):
        key = (row["nickname"], row["questions"].strip(), row["answer"].strip())
        if dedupe and key in seen:
            continue
        seen.add(key)
        cases.append(Case(
            case_id=f"guide:{row['src_row']}", kind="guide", nickname=row["nickname"],
            text=row["questions"], reference=row["answer"], category=row["category"],
            group_id=row["group_id"], src_row=int(row["src_row"])))
    return cases


def first_per_group(cases: list[Case], n: int | None) -> list[Case]:
    """The first ``n`` cases of each ``group_id`` (rows of a group are paraphrases of one intent),
    in file order; ``None`` keeps every case."""
    if n is None:
        return cases
    taken: Counter[str] = Counter()
    out = []
    for case in cases:
        taken[case.group_id] += 1
        if taken[case.group_id] <= n:
            out.append(case)
    return out


def load_cases(qa_dir: Path, *, only: Kind | None = None, limit: int | None = None,
               dedupe: bool = True, per_group: int | None = None) -> list[Case]:
    """System cases then guide cases from ``qa_dir``; ``limit`` keeps the first N rows *of each file*
    (so a smoke run with ``--limit 3`` still exercises both graders); ``per_group`` keeps the first N
    paraphrases of each intent (a cheaper run that still covers every intent)."""
    qa_dir = Path(qa_dir)
    cases: list[Case] = []
    if only in (None, "system"):
        cases += first_per_group(read_system(qa_dir / SYSTEM_FILE), per_group)[:limit]
    if only in (None, "guide"):
        cases += first_per_group(read_guide(qa_dir / GUIDE_FILE, dedupe=dedupe), per_group)[:limit]
    if not cases:
        raise DatasetError(f"no QA rows selected from {qa_dir}")
    return cases
