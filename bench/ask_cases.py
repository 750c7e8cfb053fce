"""Where ``python -m bench.ask`` gets its requests and databases: our own demo requests on the demo
data, or the QA rows of the CPHOS-dataset on its own database (``--dataset DIR``).

Either way every request runs on a private copy of one pristine SQLite file, so a committed write
never changes the next request's starting point. The demo file is seeded once per bench run; the
dataset's is the eval's template (``eval.isolation.Template``: the dump loaded once). The dataset's
rows are read from ``DIR`` at run time and picked as ``chops eval --dataset DIR`` picks them.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple


class AskCase(NamedTuple):
    """One request to time, and what a correct turn does (``None``: no operation / any outcome)."""

    nickname: str
    text: str
    route: str | None
    operation: str | None = None
    outcome: str | None = None
    case_id: str | None = None  # the dataset row ("system:21"); None for our own requests


# Our own requests, written for the demo data set (``apis/cphos/demo.py``) and the demo guides.
DEMO_CASES: list[AskCase] = [
    AskCase("demo_busy_leader", "How many problems do I still have to mark?", "basic_info"),
    AskCase("demo_vice", "What is my role in the portal?", "basic_info"),
    AskCase("demo_pending", "Has my registration been approved yet?", "basic_info"),
    AskCase("demo_leader", "Can I upload answer sheets after the deadline?", "guide"),
    AskCase("demo_leader", "How do I add a student?", "guide"),
    AskCase("demo_vice", "Is there a fee for taking part?", "guide"),
    AskCase("demo_leader", "Please change my upload limit to 40.", "system", "ChangeAllTypesUploadLimit", "ok"),
    AskCase("demo_busy_leader", "Change my marking subject to 4, please.", "system", "ChangeAllTypesMarkingSubject",
            "refused_precondition"),
    AskCase("demo_leader", "I want to change my marking subject.", "system", "ChangeAllTypesMarkingSubject",
            "refused_missing_args"),
    AskCase("demo_other_leader", "Make me a vice team leader of Lena Leader.", "system", "MakeAllTypesToBeSubCoach",
            "ok"),
    AskCase("demo_admin", "Show me the users called Bruno Busy.", "system", "GetTeacherInfoByName", "ok"),
    AskCase("demo_leader", "Please add a school called Bayview Prep in Lakeside.", "system", "AddNewSchoolByName",
            "refused_permission"),
]


def case_from_row(row: Any) -> AskCase:
    """An ``eval.dataset.Case`` (one QA row) as a request to time: asked by the row's member, expected
    to take the route of its category, and (system rows) to call its gold operation with its outcome.

    A stranger's row (``not_in_system``) expects no operation: nothing may run for someone the system
    does not know, whatever the row's gold operation says."""
    stranger = row.category == "not_in_system"
    return AskCase(nickname=row.nickname, text=row.text, route=row.expected_route,
                   operation=None if stranger else row.gold_api, outcome=None if stranger else row.outcome,
                   case_id=row.case_id)


def case_ok(case: AskCase, *, route: str | None, operation: str | None, outcome: str | None) -> dict[str, bool]:
    """Whether a turn's route, first operation and outcome are what ``case`` expects (a case without an
    expected outcome accepts any)."""
    return {"route_ok": route == case.route, "operation_ok": operation == case.operation,
            "outcome_ok": case.outcome is None or outcome == case.outcome}


@dataclass
class CaseSource:
    """The requests of one bench run, the pristine database they each get a copy of, and the guides."""

    cases: list[AskCase]
    database: Path  # a SQLite file, never written to: every request gets its own copy
    guides_dir: Path | None  # None: the configured guides
    dataset_dir: Path | None = None

    def fresh_copy(self, scratch_dir: Path | None) -> AbstractContextManager[str]:
        """A SQLAlchemy URL of a private copy of the pristine database, deleted on exit."""
        from eval.isolation import private_copy

        return private_copy(self.database, scratch_dir, "bench")

    def settings_for(self, settings: Any) -> Any:
        """``settings`` pointed at this source's data, as ``chops eval --dataset DIR`` points them."""
        if self.dataset_dir is None:
            return settings
        return settings.model_copy(update={"cphos_dir": self.dataset_dir, "guides_dir": self.guides_dir})


def demo_source(work_dir: Path, guides_dir: Path | None = None) -> CaseSource:
    """Our own requests on the demo data, seeded once into ``work_dir/demo.db``."""
    from apis.cphos.db import init_schema
    from apis.cphos.loaders import seed_demo
    from chops.db import make_engine
    from eval.isolation import fold_wal

    work_dir.mkdir(parents=True, exist_ok=True)
    path = work_dir / "demo.db"
    engine = make_engine(f"sqlite:///{path}")
    try:
        init_schema(engine)
        seed_demo(engine)
    finally:
        engine.dispose()
    fold_wal(path)  # one self-contained file to copy
    return CaseSource(list(DEMO_CASES), path, guides_dir)


def dataset_rows(dataset_dir: Path, *, per_group: int | None = None, limit: int | None = None) -> list[AskCase]:
    """The QA rows of ``dataset_dir/qa`` that ``chops eval --dataset DIR --per-group N --limit N`` runs,
    in its order, as requests to time."""
    from eval.config import EvalConfig
    from eval.runner import select_cases

    cfg = EvalConfig(per_group=per_group, limit=limit)
    return [case_from_row(row) for row in select_cases(cfg, Path(dataset_dir) / "qa")]


def dataset_source(dataset_dir: Path, work_dir: Path, *, per_group: int | None = None,
                   limit: int | None = None) -> CaseSource:
    """The dataset's QA rows on its own database (the dump loaded once into the eval's template) with
    its own guides."""
    from eval.isolation import Template

    dataset_dir = Path(dataset_dir)
    cases = dataset_rows(dataset_dir, per_group=per_group, limit=limit)
    template = Template.build(dataset_dir, work_dir)
    return CaseSource(cases, template.path, dataset_dir / "guides", dataset_dir)


def only_route(cases: list[AskCase], route: str | None) -> list[AskCase]:
    """The cases expected to take ``route`` (all of them for None)."""
    return [c for c in cases if route in (None, c.route)]
