"""The tiny prompt helper: prompt files hold all prose; code only fills in ``$placeholders``.

A prompt file has a static system part, a line ``---USER---``, and a user template. The static part
comes first so llama.cpp's prefix cache is reused across calls; everything that varies per request
(profile, excerpts, feedback, the message) sits in the user part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from string import Template

from chops.llm import Message
from chops.llm.base import load_prompt

USER_SPLIT = "---USER---"


# The domain pack's own prompt files (``DomainPack.prompts``), searched before ``prompts/`` while an agent of
# that pack runs (``Agent`` sets it around its work): a business words its prompts and made-up examples
# itself, and a pack without a file of that name gets the generic one.
_PACK_PROMPTS: ContextVar[Path | None] = ContextVar("pack_prompts", default=None)


@contextmanager
def pack_prompts(directory: Path | None) -> Iterator[None]:
    """Within the block, prompt files are looked up in ``directory`` first (None: ``prompts/`` only)."""
    token = _PACK_PROMPTS.set(directory)
    try:
        yield
    finally:
        _PACK_PROMPTS.reset(token)


def _parts(name: str) -> tuple[Template, Template]:
    return _parts_in(_PACK_PROMPTS.get(), name)


@lru_cache(maxsize=None)
def _parts_in(directory: Path | None, name: str) -> tuple[Template, Template]:
    own = directory / f"{name}.txt" if directory is not None else None
    text = own.read_text(encoding="utf-8") if own is not None and own.is_file() else load_prompt(name)
    if USER_SPLIT not in text:
        raise ValueError(f"prompts/{name}.txt lacks the {USER_SPLIT} line")
    system, user = text.split(USER_SPLIT, 1)
    return Template(system.strip()), Template(user.strip("\n"))


@lru_cache(maxsize=None)
def _fragments() -> dict[str, Template]:
    out: dict[str, Template] = {}
    for line in load_prompt("pipeline_fragments").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, _, text = line.partition(": ")
        out[key.strip()] = Template(text.replace("\\n", "\n"))
    return out


def fragment(key: str, **values: object) -> str:
    """The fragment ``key`` of ``prompts/pipeline_fragments.txt`` with ``values`` filled in."""
    return _fragments()[key].substitute({k: str(v) for k, v in values.items()})


# The fragments a retry is told why (``TurnContext.feedback``): their fixed words are instructions to the model.
RETRY_FRAGMENTS = ("feedback", "feedback_last", "feedback_invalid", "check_grounding", "check_refusal",
                   "check_no_source", "check_refused_plan", "check_no_proposal", "check_invented", "check_echo",
                   "check_claimed")
_PLACEHOLDER = re.compile(r"\$\w+")


def without_instructions(text: str, keys: Iterable[str] = RETRY_FRAGMENTS) -> str:
    """``text`` without the fixed words (20 characters or more in a row) of the fragments ``keys``: told why its
    attempt was refused, the 1.5B answered the customer with the refusal and "Read the look-ups again and choose the
    operation and values that fit them" (train task 4)."""
    for key in keys:
        for part in _PLACEHOLDER.split(_fragments()[key].template):
            part = part.strip(" .:;,\n")
            if len(part) >= 20:
                text = re.sub(re.escape(part) + r"[.:;,]?", "", text, flags=re.IGNORECASE)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def messages(name: str, *, static: dict[str, str] | None = None, **dynamic: object) -> list[Message]:
    """``[("system", ...), ("user", ...)]`` from ``prompts/<name>.txt``.

    ``static`` fills the system part (must not vary per request, e.g. the operation list);
    ``dynamic`` fills the user part. A missing placeholder is a ``KeyError`` (a bug, not a prompt).
    """
    return [("system", system_part(name, static)),
            ("user", _parts(name)[1].substitute({k: str(v) for k, v in dynamic.items()}))]


def system_part(name: str, static: dict[str, str] | None = None) -> str:
    """The static system part of ``prompts/<name>.txt`` (what an engine keeps cached per role)."""
    return _parts(name)[0].substitute(static or {})


def section(key: str, lines: list[str]) -> str:
    """An optional prompt section (``history``/``feedback``): empty when there are no lines."""
    return fragment(key, lines="\n".join(lines)) if lines else ""


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis marks the cut)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def static_heads(architecture: str, operations: str, executing: str, *, verify: bool, confirm: bool,
                 split: bool, reading: str = "steps") -> list[tuple[str, str]]:
    """(role, static system prompt) of every prompt an agent of ``architecture`` sends, in call order: the
    classifiers see the ``operations`` list, the executor ``executing`` (without the list in the inline tool
    layout); ``verify``, ``confirm``, ``split``: whether it verifies, asks for the customer's yes, splits messages;
    ``reading``: how the operations route reads a message (``typed``: ``chops.pipeline.read``)."""
    ops, executes = {"operations": operations}, {"operations": executing}
    if architecture == "executor_only":
        return [("executor", system_part("pipeline_execute_only", executes))]
    small_talk = [("classifier", system_part("pipeline_classify_small_talk")),
                  ("classifier", system_part("pipeline_classify_conversation"))]
    classify = (small_talk + [("classifier", system_part("pipeline_classify_level1")),
                              ("classifier", system_part("pipeline_classify_level2", ops))]
                if architecture == "cev_2level" else [("classifier", system_part("pipeline_classify_onelevel", ops))])
    execute = [("executor", system_part("pipeline_read" if reading == "typed" else "pipeline_execute_system",
                                        ops if reading == "typed" else executes)),
               ("executor", system_part("pipeline_execute_guide")),
               ("executor", system_part("pipeline_execute_profile"))]
    verifying = [("verifier", system_part("pipeline_verify_operation")),
                 ("verifier", system_part("pipeline_verify_answer"))] if verify else []
    confirming = [("classifier", system_part("pipeline_confirm"))] if confirm else []
    splitting = [("executor", system_part("pipeline_split")), ("classifier", system_part("pipeline_go_on"))] \
        if split else []
    return confirming + splitting + classify + execute + verifying
