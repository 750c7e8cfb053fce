"""The evaluation's configuration: which architecture, which models per role, how many trials.

A config file is JSON or TOML with the fields of ``EvalConfig``; command-line flags override it.
Example (TOML)::

    architecture = "cev_2level"
    trials = 3
    [settings]
    max_iterations = 5
    [roles.executor]
    provider = "openai"
    model = "gpt-4-0125-preview"
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from chops.settings import ROLES, Settings

Architecture = Literal["executor_only", "ce_1level", "cev_1level", "cev_2level"]
ARCHITECTURES: tuple[str, ...] = ("executor_only", "ce_1level", "cev_1level", "cev_2level")


class EvalConfig(BaseModel):
    """One evaluation run. ``roles``/``settings`` are overrides applied on top of ``chops.settings``."""

    model_config = ConfigDict(extra="forbid")

    architecture: Architecture | None = Field(default=None, description="None = the settings' architecture")
    roles: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="per-role RoleSettings overrides, e.g. {'judge': {'model': ...}}")
    settings: dict[str, Any] = Field(default_factory=dict, description="other Settings overrides")
    trials: int = Field(default=1, ge=1, le=50, description="K repetitions of every case (pass^k)")
    workers: int = Field(default=1, ge=1, le=64, description="cases run in parallel threads")
    limit: int | None = Field(default=None, ge=1, description="first N rows of each QA file")
    per_group: int | None = Field(default=None, ge=1, description="first N rows of each intent (group_id)")
    only: Literal["system", "guide"] | None = None
    dedupe: bool = Field(default=True, description="drop guide.csv rows that repeat an earlier row")
    judge: bool = Field(default=True, description="grade guide rows with the LLM judge (else: not graded)")
    shuffle_seed: int | None = Field(default=None, description="run the cases in the order this seed shuffles "
                                     "them to (reproducible); None = file order")
    memory_seed: Path | None = Field(default=None, description="a memory database (SQLite) whose solutions a new "
                                     "run starts from; None = the memory starts empty (with memory_enabled)")

    def apply(self, base: Settings) -> Settings:
        """``base`` with this config's architecture, settings and per-role overrides applied."""
        for role in self.roles:
            if role not in ROLES:
                raise ValueError(f"unknown role {role!r} in config; known: {', '.join(ROLES)}")
        data = base.model_dump()
        data.update(self.settings)
        if self.architecture:
            data["architecture"] = self.architecture
        for role, over in self.roles.items():
            data["roles"][role] = {**data["roles"][role], **over}
        return Settings.model_validate(data)

    def identity(self) -> dict[str, Any]:
        """The fields that make two runs the same experiment (a resumed run must match them).

        Selection fields (limit, per_group, only, trials, dedupe, workers) are not part of it: a record is valid
        whatever selected it, so a ``--limit 3`` smoke run can grow into the full run in place. The order and
        the memory's seed are: with the memory on, what a case saw depends on the cases before it."""
        ident = self.model_dump(include={"architecture", "roles", "settings", "judge"})
        extra = self.model_dump(mode="json", include={"shuffle_seed", "memory_seed"}, exclude_none=True)
        return {**ident, **extra}  # unset: absent, so runs made before these fields still resume


def load_config(path: Path | None, **overrides: Any) -> EvalConfig:
    """The config in ``path`` (``.json`` or ``.toml``; None = defaults) with non-None ``overrides``."""
    data: dict[str, Any] = {}
    if path is not None:
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return EvalConfig.model_validate(data)
