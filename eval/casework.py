"""Running ONE case: a fresh database copy, a fresh conversation in it, one turn through the
conversation service (as the web API and ``chops ask`` run it), the diff, the grade.

Everything a case produces goes into one JSON-able record (a line of ``results.jsonl``).
"""

from __future__ import annotations

import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apis.cphos.state import diff_snapshots, snapshot
from chops.domain.outcomes import Change
from eval.dataset import Case
from eval.grading import Grade, grade_answer, grade_system
from eval.isolation import Template

# LLM errors that mean the configuration itself is broken: every further case would fail the
# same way, so the run stops (and stays resumable) instead of recording a wall of failures.
FATAL_LLM_CODES = {"not_installed", "auth", "no_api_key", "disabled", "unknown_role"}


class EvalAbort(RuntimeError):
    """The run cannot go on (a fatal model configuration error); ``code`` is ``eval_abort``."""

    code = "eval_abort"


class _TeeLedger:
    """Adds every record to the caller's ledger and to the case's own (so per-case accounting does
    not depend on how the pipeline shapes its trace)."""

    def __init__(self, *ledgers: Any):
        self.ledgers = [lg for lg in ledgers if lg is not None]

    def add(self, rec: Any) -> None:
        """Append ``rec`` to every ledger."""
        for lg in self.ledgers:
            lg.add(rec)


class CaseLLM:
    """A per-case view of the shared LLM that also records every call in ``self.ledger``."""

    def __init__(self, llm: Any, ledger: Any):
        self._llm, self.ledger = llm, ledger

    def structured(self, role, messages, schema, *, ledger=None, on_delta=None, tier=None):  # noqa: ANN001 - the seam
        """``LLM.structured``, recorded."""
        return self._llm.structured(role, messages, schema, ledger=_TeeLedger(ledger, self.ledger),
                                    on_delta=on_delta, tier=tier)

    def text(self, role, messages, *, ledger=None, tier=None):  # noqa: ANN001
        """``LLM.text``, recorded."""
        return self._llm.text(role, messages, ledger=_TeeLedger(ledger, self.ledger), tier=tier)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)


def default_agent_factory(api: Any, llm: Any, settings: Any, index: Any, *, approvals: Any,
                          memory: Any = None) -> Any:
    """The real pipeline agent; ``approvals`` is the case database's own approval queue, ``memory`` the
    run's solution memory (None: off)."""
    from apis.cphos.pack import pack
    from chops.bootstrap import build_agent

    return build_agent(settings, pack, api, llm, index, engine=approvals.engine, approvals=approvals, memory=memory)


AgentFactory = Callable[..., Any]  # (api, llm, settings, index, *, approvals, memory) -> an Agent


@dataclass
class CaseContext:
    """What every case shares: settings, the LLM, the template database, the guide index."""

    settings: Any
    llm: Any
    template: Template
    index: Any
    scratch_dir: Path
    agent_factory: AgentFactory = default_agent_factory
    judge: bool = True
    memory: Any = None  # the run's SolutionMemory: outside the per-case copies, so it fills as cases run


def _dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


def change_record(change: Change) -> dict:
    """A diff entry as ``results.jsonl`` keeps it: ``{"op": "update", "table", "key", "field", "before",
    "after"}``, or ``{"op": "insert"|"delete", "table", "row"}``."""
    if change.field is not None:
        return {"op": "update", "table": change.table, "key": change.key, "field": change.field,
                "before": change.before, "after": change.after}
    if change.after is not None:
        return {"op": "insert", "table": change.table, "row": change.after}
    return {"op": "delete", "table": change.table, "row": change.before}


def verifier_scores(trace: Any) -> list[dict]:
    """Per-iteration verifier verdicts from a turn's typed events: ``[{iteration, score, passed, threshold}]``."""
    from chops.pipeline.events import Verify, events_of

    return [v.model_dump(include={"iteration", "score", "passed", "threshold"}) for v in events_of(_dump(trace), Verify)]


def eco_fields(trace: Any) -> dict:
    """What a case record keeps of EcoAssistant's techniques: the tier of the answer given, the
    demonstrations shown, the memory entry the turn was stored as."""
    from chops.pipeline.events import Recall, events_of

    trace = _dump(trace) or {}
    recalls = events_of(trace, Recall)
    return {"tier": trace.get("tier"), "demonstrations": sum(len(r.ids) for r in recalls),
            "remembered": trace.get("remembered")}


def run_case(case: Case, trial: int, ctx: CaseContext) -> dict:
    """Run one case on a private database copy and grade it; an exception becomes a failed record
    with its traceback (except ``EvalAbort``, which stops the run)."""
    from apis.cphos.service import Api
    from chops.conversation import ConversationService
    from chops.db import make_engine
    from chops.llm import Ledger, LLMError
    from chops.store import ConversationStore

    rec: dict[str, Any] = {"key": f"{case.case_id}#{trial}", "case_id": case.case_id, "trial": trial,
                           **case.model_dump(exclude={"case_id"}), "error": None}
    t0 = time.perf_counter()
    ledger = Ledger()
    try:
        with ctx.template.fresh_copy(ctx.scratch_dir) as url:
            engine = make_engine(url)
            try:
                api = Api(engine)
                store = ConversationStore(engine, api=api)
                agent = ctx.agent_factory(api, CaseLLM(ctx.llm, ledger), ctx.settings, ctx.index, approvals=store,
                                          memory=ctx.memory)
                # The case's own conversation in its own database copy: a queued write links to it.
                service = ConversationService(store, agent)
                conversation_id = service.start(case.nickname, "eval")
                turn = service.run_turn(conversation_id, case.nickname, case.text).result
                t_snap = time.perf_counter()
                changes = diff_snapshots(ctx.template.before, snapshot(engine))
                rec["snapshot_s"] = round(time.perf_counter() - t_snap, 4)
            finally:
                engine.dispose()
        t = _dump(turn)
        rec["llm_error"] = None
        rec.update({k: t.get(k) for k in ("reply", "route", "operation", "args", "outcome", "committed",
                                           "queued", "iterations", "chars_in", "chars_out", "cost_usd")})
        rec["turn_latency_s"] = t.get("latency_s")
        # Every operation of a plan, in order (``operation`` is the first): a row asking for one change
        # that got a plan of two is reported as such, and its extra row change fails the db_state grade.
        rec["operations"] = [s["operation"] for s in t.get("steps") or []] or \
            ([t["operation"]] if t.get("operation") else [])
        rec["diff"] = [change_record(c) for c in changes]
        rec["verifier"] = verifier_scores(t.get("trace"))
        rec.update(eco_fields(t.get("trace")))
        rec["chooser_used"] = any(r.role == "chooser" for r in ledger.records)
        if case.kind == "system" or case.category == "not_in_system":
            grade = grade_system(case, outcome=t.get("outcome"), reply=t.get("reply") or "",
                                 route=t.get("route"), changes=changes)
        elif ctx.judge:
            judge_ledger = Ledger()
            grade = grade_answer(case, t.get("reply") or "", ctx.llm, ledger=judge_ledger)
            rec["judge_calls"] = judge_ledger.totals()
        else:
            grade = Grade(passed=False, method="ungraded", reasons=["judge disabled"])
        rec["grade"] = grade.model_dump()
        rec["passed"] = grade.passed
    except EvalAbort:
        raise
    except LLMError as exc:
        if getattr(exc, "code", None) in FATAL_LLM_CODES:
            raise EvalAbort(f"model configuration error, run stopped: {exc}") from exc
        rec.update(passed=False, error=traceback.format_exc(), error_code=getattr(exc, "code", None),
                   llm_error=getattr(exc, "code", None))
    except Exception:  # noqa: BLE001 - a crash in one case is a failed case, never a dead run
        rec.update(passed=False, error=traceback.format_exc(), error_code="crash")
    rec["calls_by_role"] = ledger.by_role()
    rec["calls_by_model"] = ledger.by_role_and_model()  # a role's tiers are priced by their own model
    # EcoAssistant: which tier (or, without tiers, which model) answered each executor call.
    rec["executor_tiers"] = dict(Counter(r.tier or r.model for r in ledger.records if r.role == "executor"))
    rec["calls"] = ledger.totals()
    rec["latency_s"] = round(time.perf_counter() - t0, 4)
    return rec
