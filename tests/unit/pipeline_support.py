"""Shared pieces of the pipeline and store unit tests: a real SQLite database with the demo seed,
a small fake guide index, and helpers to read the database state. Only the model is scripted."""

from __future__ import annotations

import re

import numpy as np
import sqlalchemy as sa

from apis.cphos import tables as t
from apis.cphos.db import init_schema
from apis.cphos.loaders import seed_demo
from apis.cphos.pack import pack as cphos_pack
from apis.cphos.service import Api
from chops import tables as ct
from chops.db import make_engine
from chops.i18n import use_catalogs
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


class WordsEmbedder:
    """A small deterministic embedder: hashed bag of lower-case words, unit length. Texts sharing most
    words are close (cosine near 1), texts sharing none are orthogonal: enough to test the floor."""

    name = "test-words"
    dim = 256

    def embed(self, texts: list[str]) -> np.ndarray:
        import zlib

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, zlib.crc32(word.encode()) % self.dim] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


class FakeIndex:
    """Stands in for ``GuideIndex``: returns the fixed chunks and remembers the queries."""

    def __init__(self, chunks=GUIDE_CHUNKS):
        self.chunks = list(chunks)
        self.queries: list[tuple[str, int, str]] = []
        self.embedder = WordsEmbedder()  # what the solution memory embeds requests with

    version = "fake"

    def current(self):
        return self

    def search(self, query: str, k: int = 3, size: str = "long"):
        self.queries.append((query, k, size))
        return self.chunks[:k]


def demo_engine(url: str) -> sa.Engine:
    """An engine on ``url`` with the schema and the demo data."""
    engine = make_engine(url)
    init_schema(engine)
    seed_demo(engine)
    return engine


def make_agent(engine, llm=None, index=None, memory=None, router=None, pending=None, tools=None,
               **overrides) -> tuple[Agent, ScriptedLLM]:
    """An Agent over the real Api with a scripted model (and the fake index unless given); ``pending``: where
    changes waiting for the user's yes are kept (None: a write that needs it goes to staff); ``tools``: a
    ``ToolRanker`` (None: every operation offered)."""
    llm = llm or ScriptedLLM()
    settings = get_settings(**overrides)
    api = Api(engine)
    use_catalogs(cphos_pack.locale)  # as the wiring (``chops.bootstrap.build_agent``) does
    return Agent(api, llm, settings, index if index is not None else FakeIndex(),
                 approvals=ConversationStore(engine, api=api), memory=memory, router=router, pending=pending,
                 prompts=cphos_pack.prompts, tools=tools), llm


def member(engine, nickname: str) -> dict:
    """The member row of ``nickname``."""
    with engine.connect() as conn:
        return dict(conn.execute(sa.select(t.member).where(t.member.c.nickname == nickname)).mappings().one())


def audit_rows(engine) -> list[dict]:
    """Every audit-log row (one per committed call)."""
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.select(ct.audit_log)).mappings()]


def db_snapshot(engine) -> dict:
    """Every member row and the project tables' row counts: "the database is untouched" compares these."""
    with engine.connect() as conn:
        members = [tuple(r) for r in conn.execute(sa.select(t.member).order_by(t.member.c.id))]
        schools = conn.execute(sa.select(sa.func.count()).select_from(t.school)).scalar()
        audits = conn.execute(sa.select(sa.func.count()).select_from(ct.audit_log)).scalar()
        approvals = conn.execute(sa.select(sa.func.count()).select_from(ct.approval)).scalar()
    return {"members": members, "schools": schools, "audits": audits, "approvals": approvals}


def call(operation: str, **args) -> dict:
    """A scripted executor reply proposing ``operation`` with ``args`` (a one-step plan)."""
    return plan((operation, args))


def single_call(operation: str, **args) -> dict:
    """A scripted reply of the executor-only architecture (one call, no plan) proposing ``operation``."""
    return {"call": {"operation": operation, "args": args}}


def plan(*steps: tuple[str, dict]) -> dict:
    """A scripted executor reply proposing the plan ``(operation, args), ...``."""
    return {"calls": [{"operation": op, "args": args} for op, args in steps]}


def verdict(score: int, reason: str = "looks right") -> dict:
    """A scripted verifier reply."""
    return {"reason": reason, "score": score}


# The small-talk gate's answer for a fresh message about the platform (the classifier asks it first,
# on iteration 1 only; see chops.pipeline.classifier).
ABOUT_PLATFORM = {"route": "about_the_platform"}


def to_system(llm: ScriptedLLM, *, fresh: bool = True) -> None:
    """Script the classifier to route to the system (``fresh``: iteration 1, so the gate is asked first)."""
    if fresh:
        llm.enqueue("classifier", ABOUT_PLATFORM)
    llm.enqueue("classifier", {"route": "something_else"}).enqueue("classifier", {"route": "do_operation"})


def answering(llm: ScriptedLLM) -> None:
    """Script the classifier for an answer to the agent's own question: only the gate is asked (the answer keeps the
    route of the request it completes)."""
    llm.enqueue("classifier", ABOUT_PLATFORM)


def to_guide(llm: ScriptedLLM, *, fresh: bool = True) -> None:
    """Script the classifier to route to the guides (``fresh``: iteration 1, so the gate is asked first)."""
    if fresh:
        llm.enqueue("classifier", ABOUT_PLATFORM)
    llm.enqueue("classifier", {"route": "something_else"}).enqueue("classifier", {"route": "answer_from_guide"})


def to_profile(llm: ScriptedLLM, *, fresh: bool = True) -> None:
    """Script the classifier to route to basic info (``fresh``: iteration 1, so the gate is asked first)."""
    if fresh:
        llm.enqueue("classifier", ABOUT_PLATFORM)
    llm.enqueue("classifier", {"route": "own_fact"})


def small_talk(llm: ScriptedLLM, kind: str) -> None:
    """Script the gate to say small talk and the kind question to answer ``kind``."""
    llm.enqueue("classifier", {"route": "small_talk"}).enqueue("classifier", {"route": kind})


def prompt_text(llm: ScriptedLLM, role: str, index: int = -1) -> str:
    """All message text of the ``index``-th call of ``role``."""
    calls = [c for c in llm.calls if c[0] == role]
    return "\n".join(content for _, content in calls[index][1])
