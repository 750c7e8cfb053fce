""""The previous way" that ``python -m bench.ask --vs-previous`` times beside the current settings.

``PREVIOUS`` holds the settings as they were before issue 23's second step: the verifier gives its
reason first (then the score), the router does not keep its route across a retry, the executor sees
every operation (no top-k selection of tools), and the guide answer reads the 3 best long chunks of
1200 characters. Some of these settings are added on other branches; a key the running
``chops.settings.Settings`` does not know is skipped (and named), so the bench runs on any branch.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

PREVIOUS: dict[str, Any] = {"verifier_reason": "first", "router_keeps_route": False, "tool_top_k": 0,
                            "k_long": 3, "chunk_long": 1200}

# Settings that decide how the guides are cut into chunks: when one differs, the index differs too.
CHUNK_FIELDS = ("chunk_short", "chunk_long")


def known_overrides(previous: Mapping[str, Any], fields: Collection[str]) -> tuple[dict[str, Any], list[str]]:
    """``previous`` split into the overrides whose key is one of ``fields`` (the ones ``Settings`` has)
    and the names of the keys it lacks, in ``previous``'s order."""
    return ({k: v for k, v in previous.items() if k in fields}, [k for k in previous if k not in fields])


def previous_settings(settings: Any, previous: Mapping[str, Any] = PREVIOUS) -> tuple[Any, list[str]]:
    """``settings`` with the known keys of ``previous`` applied (validated as an eval config's settings
    overrides are), and the keys skipped because ``Settings`` has no such field."""
    from chops.settings import Settings
    from eval.config import EvalConfig

    known, skipped = known_overrides(previous, Settings.model_fields)
    return EvalConfig(settings=known).apply(settings), skipped


def needs_own_index(current: Any, other: Any) -> bool:
    """Whether ``other`` cuts the guides into chunks of other sizes than ``current`` (so it needs an index
    of its own: the library keeps one chunking per folder)."""
    return any(getattr(current, f) != getattr(other, f) for f in CHUNK_FIELDS)
