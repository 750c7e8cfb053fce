"""The tiny prompt helper: prompt files hold all prose; code only fills in ``$placeholders``.

A prompt file has a static system part, a line ``---USER---``, and a user template. The static part
comes first so llama.cpp's prefix cache is reused across calls; everything that varies per request
(profile, excerpts, feedback, the message) sits in the user part.
"""

from __future__ import annotations

from functools import lru_cache
from string import Template

from chops.llm import Message
from chops.llm.base import load_prompt

USER_SPLIT = "---USER---"


@lru_cache(maxsize=None)
def _parts(name: str) -> tuple[Template, Template]:
    text = load_prompt(name)
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
