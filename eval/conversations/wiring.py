"""The real agent behind the conversation eval: one LLM and one guide index for the whole run, and per
conversation a ``ConversationService`` over that conversation's own database, built through
``chops.bootstrap`` as the web app and ``chops ask`` build theirs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def guides_folder(settings: Any, pack: Any, guides_dir: Path | None = None, work_dir: Path | None = None) -> Path:
    """The folder of guides the agent answers policy questions from: ``guides_dir``; else the pack's guides
    folder (``pack.guides``); else its one policy file (``pack.policy_path()``), copied alone into
    ``work_dir/guides`` (its own folder may hold other documents the agent must not read, such as a data
    pack's README describing the grading); else the settings' ``guides_dir``."""
    if guides_dir is not None:
        return Path(guides_dir)
    if getattr(pack, "guides", None):
        return Path(pack.guides)
    policy = pack.policy_path()
    if policy is not None and work_dir is not None:
        import shutil

        path = Path(policy)
        if not path.is_file():  # another business's guides would be worse than none: say so
            raise FileNotFoundError(f"the {pack.name} pack's policy {path} does not exist; point the pack at its "
                                    "data (e.g. CHOPS_RETAIL_DIR) or give --guides DIR")
        folder = Path(work_dir) / "guides"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, folder / path.name)  # same bytes: the index sees no change on resume
        return folder
    return Path(settings.guides_dir)


def guide_index(settings: Any, pack: Any, guides_dir: Path | None = None, work_dir: Path | None = None) -> Any:
    """The guide index over ``guides_folder(...)`` (built, or brought up to date, here)."""
    from chops.retrieval import GuideIndex

    return GuideIndex.load_or_build(guides_folder(settings, pack, guides_dir, work_dir), settings)


def agent_service_factory(settings: Any, pack: Any, *, llm: Any = None, index: Any = None,
                          guides_dir: Path | None = None, work_dir: Path | None = None,
                          ) -> tuple[Callable[[Any, Any], Any], Callable[[], None] | None]:
    """(engine, api -> a ConversationService of the real agent, a closer for the LLM built here or None).

    One LLM serves every conversation (the engine's slots and prompt caches are shared; the threads take
    turns on it); the agent, its store and its pending changes live in the conversation's own database."""
    from chops.bootstrap import build_agent
    from chops.conversation import ConversationService
    from chops.store import ConversationStore

    own = llm is None
    if own:
        from chops.llm import build_llm

        llm = build_llm(settings)
    index = index if index is not None else guide_index(settings, pack, guides_dir, work_dir)

    def make(engine: Any, api: Any) -> Any:
        store = ConversationStore(engine, api=api)
        agent = build_agent(settings, pack, api, llm, index, engine=engine, approvals=store)
        return ConversationService(store, agent)

    return make, (llm.close if own and hasattr(llm, "close") else None)
