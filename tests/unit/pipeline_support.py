"""Shared pieces of the pipeline and store unit tests: a real SQLite database with the demo seed,
a small fake guide index, and helpers to read the database state. Only the model is scripted."""

from __future__ import annotations

import sqlalchemy as sa

from apis import tables as t
from apis.db import init_schema, make_engine
from apis.loaders import seed_demo
from apis.service import Api
from chops.llm import ScriptedLLM
from chops.pipeline import Agent
from chops.retrieval import Chunk
from chops.settings import get_settings
from chops.store import ConversationStore

# Our own made-up guide text (not from any dataset).
GUIDE_CHUNKS = [
    Chunk(file="user-guide.pdf", page=3, text="To upload answer sheets, open Papers, choose the exam and press "
          "Upload. Uploads close at the deadline; late sheets are not accepted.", score=0.81),
    Chunk(file="faq.pdf", page=1, text="Forgot your password? Use the Reset link on the sign-in page.", score=0.42),
]


class FakeIndex:
    """Stands in for ``GuideIndex``: returns the fixed chunks and remembers the queries."""

    def __init__(self, chunks=GUIDE_CHUNKS):
        self.chunks = list(chunks)
        self.queries: list[tuple[str, int, str]] = []

    def search(self, query: str, k: int = 3, size: str = "long"):
        self.queries.append((query, k, size))
        return self.chunks[:k]


def demo_engine(url: str) -> sa.Engine:
    """An engine on ``url`` with the schema and the demo data."""
    engine = make_engine(url)
    init_schema(engine)
    seed_demo(engine)
    return engine


def make_agent(engine, llm=None, index=None, **overrides) -> tuple[Agent, ScriptedLLM]:
    """An Agent over the real Api with a scripted model (and the fake index unless given)."""
    llm = llm or ScriptedLLM()
    settings = get_settings(**overrides)
    api = Api(engine)
    return Agent(api, llm, settings, index if index is not None else FakeIndex(),
                 approvals=ConversationStore(engine, api=api)), llm


def member(engine, nickname: str) -> dict:
    """The member row of ``nickname``."""
    with engine.connect() as conn:
        return dict(conn.execute(sa.select(t.member).where(t.member.c.nickname == nickname)).mappings().one())


def audit_rows(engine) -> list[dict]:
    """Every audit-log row (one per committed call)."""
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.select(t.audit_log)).mappings()]


def db_snapshot(engine) -> dict:
    """Every member row and the project tables' row counts: "the database is untouched" compares these."""
    with engine.connect() as conn:
        members = [tuple(r) for r in conn.execute(sa.select(t.member).order_by(t.member.c.id))]
        schools = conn.execute(sa.select(sa.func.count()).select_from(t.school)).scalar()
        audits = conn.execute(sa.select(sa.func.count()).select_from(t.audit_log)).scalar()
        approvals = conn.execute(sa.select(sa.func.count()).select_from(t.approval)).scalar()
    return {"members": members, "schools": schools, "audits": audits, "approvals": approvals}


def call(operation: str, **args) -> dict:
    """A scripted executor reply proposing ``operation`` with ``args``."""
    return {"call": {"operation": operation, "args": args}}


def verdict(score: int, reason: str = "looks right") -> dict:
    """A scripted verifier reply."""
    return {"reason": reason, "score": score}


def to_system(llm: ScriptedLLM) -> None:
    """Script the two-level classifier to route to the system."""
    llm.enqueue("classifier", {"route": "something_else"}).enqueue("classifier", {"route": "do_operation"})


def to_guide(llm: ScriptedLLM) -> None:
    """Script the two-level classifier to route to the guides."""
    llm.enqueue("classifier", {"route": "something_else"}).enqueue("classifier", {"route": "answer_from_guide"})


def prompt_text(llm: ScriptedLLM, role: str, index: int = -1) -> str:
    """All message text of the ``index``-th call of ``role``."""
    calls = [c for c in llm.calls if c[0] == role]
    return "\n".join(content for _, content in calls[index][1])
