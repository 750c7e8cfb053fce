"""Deterministic replies from real results: cheaper than a model call and never misreports an outcome.

Templates live in ``prompts/pipeline_fragments.txt``; this module only chooses one and fills it in.
"""

from __future__ import annotations

from typing import Any

from chops.pipeline.context import Candidate
from chops.pipeline.prompting import clip, fragment

READ_ROWS = 10  # rows listed in a reply; more are summarised by count


def answer_reply(cand: Candidate) -> str:
    """The executor's answer, with the cited guide file and page."""
    text = (cand.answer or "").strip() or fragment("reply_no_answer")
    if cand.route == "guide" and cand.source is not None:
        text += " " + fragment("reply_cite", file=cand.source.file, page=cand.source.page)
    return text


def missing_description(operation: Any, args: dict[str, Any]) -> str:
    """The arguments still missing, described for the user (from the registry's field descriptions)."""
    parts = []
    for name, info in operation.args_model.model_fields.items():
        key = info.alias or name
        if args.get(key) is None:
            parts.append(f"{info.description or key}")
    return "; ".join(parts) or "the missing details"


def operation_reply(operation: Any, result: Any, args: dict[str, Any]) -> str:
    """The reply for a write's (or a refused read's) real result."""
    outcome = str(result.outcome)
    message = result.message.strip()
    if outcome == "ok":
        return fragment("reply_done", message=message)
    if outcome == "ok_noop":
        return fragment("reply_noop", message=message)
    if outcome == "refused_missing_args":
        return fragment("reply_missing", missing=missing_description(operation, args))
    return fragment("reply_refused", message=message)


def read_reply(operation: Any, result: Any, args: dict[str, Any]) -> str:
    """The reply for a read: its rows, one line each, or the refusal."""
    if not result.outcome.succeeded:
        return operation_reply(operation, result, args)
    rows = result.data if isinstance(result.data, list) else ([result.data] if result.data else [])
    if not rows:
        return fragment("reply_read_empty", message=result.message.strip())
    lines = [f"- {_row_text(r)}" for r in rows[:READ_ROWS]]
    if len(rows) > READ_ROWS:
        lines.append(f"- … and {len(rows) - READ_ROWS} more")
    return fragment("reply_read", message=result.message.strip(), rows="\n".join(lines))


def _row_text(row: Any) -> str:
    if isinstance(row, dict):
        return clip(", ".join(f"{k}: {v}" for k, v in row.items() if v not in (None, "")), 400)
    if hasattr(row, "model_dump"):
        return _row_text(row.model_dump())
    return clip(str(row), 400)
