"""One place that wires the agent's object graph (cosmicpython's ``bootstrap``): the web app, ``chops ask``,
the evaluations and the benchmarks all build their ``Agent`` here, so a new collaborator (the pending
changes, a pack's own prompts) reaches every caller at once."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from chops.domain.pack import DomainPack
from chops.domain.system import SystemApi
from chops.i18n import use_catalogs
from chops.pending import PendingChanges
from chops.pipeline import Agent
from chops.pipeline.tools import ToolRanker
from chops.retrieval.embedders import make_embedder
from chops.router import router_for
from chops.settings import Settings


def build_agent(settings: Settings, pack: DomainPack, api: SystemApi, llm: Any, index: Any, *, engine: sa.Engine,
                approvals: Any, memory: Any = None, router: bool = True) -> Agent:
    """The pipeline agent of ``pack`` over ``api``: its router (``router=False``: none), its tool ranker (with
    ``tool_top_k``), the pack's prompt files and catalogs, and the conversation's pending changes kept in
    ``engine``'s ``chops_pending_change``."""
    if pack.locale is not None:
        use_catalogs(pack.locale)
    routing = router_for(settings, pack, index) if router else None
    tools = None
    if settings.tool_top_k > 0:
        # The embedder the router or the guide index holds already: one loaded model per process.
        embedder = getattr(routing, "embedder", None) or getattr(index, "embedder", None) or make_embedder(settings)
        tools = ToolRanker(api.operations, embedder, top_k=settings.tool_top_k)
    return Agent(api, llm, settings, index, approvals=approvals, memory=memory, router=routing,
                 pending=PendingChanges(engine, settings.confirm_ttl_s), prompts=pack.prompts,
                 closing_question=pack.closing_question, tools=tools, split_requests=pack.split_requests,
                 currency=pack.currency, clock=pack.now,
                 reading=pack.reading if settings.reading == "pack" else settings.reading)
