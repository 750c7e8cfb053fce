"""Graders. System rows are graded deterministically by the database state; guide and basic-info
rows by an LLM judge (role ``judge``) plus a deterministic reference-similarity score.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from apis.cphos.state import Fact, match_effect, parse_effect
from chops.domain.outcomes import Change
from eval.dataset import Case

SUCCESS = ("ok", "ok_noop")

# Words that show a reply names the argument it lacks, per CPHOS argument name.
ARG_WORDS = {
    "SubjectIndex": ("subject", "problem", "index"),
    "ViewProblem": ("subject", "problem", "index"),
    "Name": ("name",),
    "TeamLeaderName": ("team leader", "name"),
    "Limit": ("limit", "number"),
    "SchoolName": ("school",),
    "AreaName": ("area",),
    "TeacherName": ("name",),
}
# A reply that asks for or reports missing input (the reference replies say "arguments ... not complete").
_ASKS = re.compile(r"\?|\b(missing|not (been )?(provided|given|complete)|incomplete|provide|specify|tell me|"
                   r"which|what|please (give|send|enter)|need|required|not enough|insufficient)\b", re.I)


class Grade(BaseModel):
    """The verdict on one case; ``checks`` holds the individual criteria, ``reasons`` why it failed."""

    passed: bool
    method: str  # "db_state" | "missing_args" | "not_in_system" | "judge"
    checks: dict[str, bool] = Field(default_factory=dict)
    reasons: list[str] = Field(default_factory=list)
    judge_correct: bool | None = None
    judge_reason: str | None = None
    judge_error: str | None = None
    similarity: float | None = None  # token F1 against the reference, 0..1
    ratio: float | None = None  # difflib sequence ratio against the reference, 0..1


class JudgeVerdict(BaseModel):
    """The judge's structured reply. The reference's key fact comes first: a small model that names
    the one fact to look for decides more reliably than one asked for a free-form reason, which
    tended to invent differences of wording (measured in the issue-7 note)."""

    key_fact: str = Field(description="the key fact of the reference answer, in a few words")
    same: bool = Field(description="true when the assistant's answer states that key fact")


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", (text or "").lower())


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD-style token F1 between two texts (lower-cased alphanumeric tokens)."""
    p, r = _tokens(prediction), _tokens(reference)
    if not p or not r:
        return float(p == r)
    common = sum((Counter(p) & Counter(r)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(r)
    return 2 * precision * recall / (precision + recall)


def sequence_ratio(prediction: str, reference: str) -> float:
    """``difflib.SequenceMatcher`` ratio of the lower-cased, whitespace-normalised texts."""
    norm = lambda s: " ".join((s or "").lower().split())  # noqa: E731
    return difflib.SequenceMatcher(None, norm(prediction), norm(reference)).ratio()


def reports_missing(reply: str, missing: list[str]) -> bool:
    """True when ``reply`` asks for, or reports, a missing argument (generic or by name)."""
    text = (reply or "").lower()
    names = any(w in text for arg in missing for w in ARG_WORDS.get(arg, (arg.lower(),)))
    return bool(_ASKS.search(text)) and (names or "argument" in text or "information" in text
                                         or "detail" in text or not missing)


def show_fact(fact: Fact) -> str:
    """A typed change (``apis.cphos.state.fact``) in the ``expected_effect`` notation, values as ``repr``."""
    if fact[0] == "update":
        key = ",".join(f"{k}={v}" for k, v in fact[2])
        return f"{fact[1]}[{key}].{fact[3]}={fact[4]!r}"
    sign = "+" if fact[0] == "insert" else "-"
    return f"{fact[1]}{sign}{{{', '.join(f'{k}={v!r}' for k, v in fact[2])}}}"


def compare_effect(expected: list[Change], actual: list[Change]) -> tuple[bool, list[str]]:
    """Whether ``actual`` is exactly ``expected`` (nothing missing, nothing extra), with reasons for
    people (``apis.cphos.state.match_effect`` decides; inserts need only agree on the fields named)."""
    missing, unexpected = match_effect(expected, actual)
    problems = [f"missing change {show_fact(f)}" for f in missing] + \
               [f"unexpected change {show_fact(f)}" for f in unexpected]
    return not problems, problems


def grade_system(case: Case, *, outcome: str | None, reply: str, route: str | None,
                 changes: list[Change]) -> Grade:
    """Grade a ``system.csv`` row by the turn's outcome code and the database diff.

    - missing-argument rows: nothing written, no other outcome than ``refused_missing_args`` (or
      none: the agent asked back without calling), and the reply asks for / reports the argument;
    - ``not_in_system`` rows: nothing written and the turn recognised the stranger;
    - every other row: outcome equals the annotation AND the diff equals ``expected_effect`` exactly.
    """
    expected = parse_effect(case.expected_effect)
    effect_ok, problems = compare_effect(expected, changes)
    if case.outcome == "refused_missing_args":
        checks = {"nothing_written": not changes,
                  "no_other_outcome": outcome in (None, "refused_missing_args"),
                  "reply_reports_missing": reports_missing(reply, case.missing_args)}
        reasons = problems + [f"outcome {outcome!r} is not refused_missing_args"] * (not checks["no_other_outcome"])
        if not checks["reply_reports_missing"]:
            reasons.append(f"reply does not ask for / report the missing {', '.join(case.missing_args) or 'argument'}")
        return Grade(passed=all(checks.values()), method="missing_args", checks=checks, reasons=reasons)
    if case.category == "not_in_system" or case.outcome == "not_in_system":
        checks = {"nothing_written": not changes,
                  "recognised": route == "not_in_system" or outcome == "not_in_system"}
        reasons = problems + ([] if checks["recognised"] else [f"route {route!r} / outcome {outcome!r}"])
        return Grade(passed=all(checks.values()), method="not_in_system", checks=checks, reasons=reasons)
    checks = {"outcome": outcome == case.outcome, "effect": effect_ok}
    reasons = ([] if checks["outcome"] else [f"outcome {outcome!r}, expected {case.outcome!r}"]) + problems
    return Grade(passed=all(checks.values()), method="db_state", checks=checks, reasons=reasons)


def judge_messages(case: Case, reply: str) -> list[tuple[str, str]]:
    """The judge's prompt (``prompts/eval_judge.txt``, the pipeline's prompt format) for one case and reply."""
    from chops.pipeline.prompting import messages

    return messages("eval_judge", question=case.text.strip(), reference=case.reference.strip(),
                    reply=(reply or "").strip() or "(no answer)")


def grade_answer(case: Case, reply: str, llm: Any, *, ledger: Any = None) -> Grade:
    """Grade a guide / basic-info row: the LLM judge decides, the similarity scores are reported.

    A judge failure (``LLMError``) counts as not correct and keeps the error, never a crash.
    """
    from chops.llm import LLMError

    sim, ratio = token_f1(reply, case.reference), sequence_ratio(reply, case.reference)
    try:
        verdict = llm.structured("judge", judge_messages(case, reply), JudgeVerdict, ledger=ledger)
    except LLMError as exc:
        return Grade(passed=False, method="judge", checks={"judge": False}, reasons=[f"judge failed: {exc}"],
                     judge_error=getattr(exc, "code", "error"), similarity=sim, ratio=ratio)
    reason = f"key fact {verdict.key_fact!r} {'stated' if verdict.same else 'not stated'} in the answer"
    return Grade(passed=verdict.same, method="judge", checks={"judge": verdict.same},
                 reasons=[] if verdict.same else [reason], judge_correct=verdict.same,
                 judge_reason=reason, similarity=sim, ratio=ratio)
