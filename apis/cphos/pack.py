"""The CPHOS domain pack: the olympiad marking platform's system as the agent sees it (registered in
``pyproject.toml`` under the ``chops.domains`` entry-point group as ``cphos``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from apis.cphos import tables as t
from apis.cphos.db import MIGRATIONS
from apis.cphos.loaders import load_cphos, seed_demo
from apis.cphos.service import Api
from chops.domain.outcomes import OperationResult


class CphosPack:
    """CPHOS: members (team leaders, vice team leaders, arbiters, admins), schools, exams, marking."""

    name = "cphos"
    router_examples = Path(__file__).with_name("router_examples.jsonl")
    reading = "steps"  # its figures were measured that way
    currency = None  # its operations move no money
    locale = Path(__file__).with_name("locale")  # the Chinese words of its operations, arguments and roles
    closing_question = False  # replies stay as the CPHOS figures were measured
    split_requests = False  # several changes are one plan of up to three calls, verified together
    prompts = Path(__file__).with_name("prompts")  # CPHOS's wording and made-up examples, over the generic prompts/
    metadata = t.metadata
    migrations = MIGRATIONS  # the cmf_tp_* tables' history (version table cphos_alembic_version)

    def api(self, engine: sa.Engine) -> Api:
        """The CPHOS ``Api`` (ten typed operations) over ``engine``."""
        return Api(engine)

    def has_users(self, engine: sa.Engine) -> bool:
        """True when ``cmf_tp_member`` holds a row."""
        with engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(t.member)).scalar() > 0

    def seed_demo(self, engine: sa.Engine) -> dict[str, int]:
        """Our demo members (``demo_leader``, ``demo_admin``, ...) in place of the ``cmf_tp_*`` rows."""
        return seed_demo(engine)

    def load(self, engine: sa.Engine, directory: Path, *, progress: bool = False) -> dict[str, int]:
        """The CPHOS-dataset dump (its ``database`` folder) in place of the ``cmf_tp_*`` rows."""
        return load_cphos(engine, directory, progress=progress)

    def export(self, engine: sa.Engine) -> dict:
        """Not offered: the CPHOS dump is a set of SQL tables, not one JSON document."""
        raise NotImplementedError("the cphos pack does not export its state")

    def policy_path(self) -> None:
        """None: CPHOS answers from its guide PDFs (the deployment's guides folder)."""
        return None

    def replay(self, api: Api, user: str, name: str, args: dict[str, Any]) -> OperationResult:
        """A reference call, run as it stands."""
        return api.call(name, user, args)

    def now(self) -> datetime:
        """The wall clock."""
        return datetime.now()


pack = CphosPack()
