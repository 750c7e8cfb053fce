"""``build_llm``: per-role providers (one per tier) from settings; every role on the same local
model shares one engine (the 0.5B and the 1.5B each get their own, with their own slots)."""

from __future__ import annotations

from pathlib import Path

from chops.llm.base import LLM
from chops.settings import MODEL_05B_NAME, ROLES, RoleSettings, Settings, role_tiers


def build_llm(settings: Settings) -> LLM:
    """An ``LLM`` with one adapter per role as configured in ``settings.roles``.

    Nothing is loaded or connected here: the local engine starts on its first call, so building is
    cheap (the app factory and the CLI can build one unconditionally). Roles with provider
    ``scripted`` share one ``ScriptedProvider``, exposed as ``llm.script`` for tests to fill.
    """
    tiers: dict[str, list] = {}
    shared: dict[str, object] = {"script": None}
    for role in ROLES:
        tiers[role] = [(name, _provider(settings, rs, role, shared)) for name, rs in role_tiers(settings, role)]
    # Only a role configured with tiers has named tiers (recorded on its calls); others have one model.
    llm = LLM({role: tiers[role][0][1] for role in ROLES},
              tiers={role: ts for role, ts in tiers.items() if settings.roles.get(role).tiers})
    llm.script = shared["script"]  # type: ignore[attr-defined]
    return llm


def _provider(settings: Settings, rs: RoleSettings, role: str, shared: dict):
    """One role-tier's adapter; ``shared`` holds what several tiers reuse (the script)."""
    if rs.provider == "local":
        from chops.llm.local_provider import LocalProvider

        return LocalProvider(engine_for(settings, path=local_path(settings, rs.model)), rs)
    if rs.provider == "openai":
        from chops.llm.openai_provider import OpenAIProvider

        return OpenAIProvider(rs)
    if rs.provider == "scripted":
        from chops.llm.scripted import ScriptedProvider

        shared["script"] = shared["script"] or ScriptedProvider()
        return shared["script"]
    raise ValueError(f"unknown provider {rs.provider!r} for role {role}")  # pragma: no cover - validated


def local_path(settings: Settings, model: str) -> Path:
    """The GGUF file of an embedded model name: the 0.5B's install path, else the (default) 1.5B's."""
    return settings.small_model_path if model == MODEL_05B_NAME else settings.model_path


def engine_for(settings: Settings, *, path: Path | None = None, host: str = "127.0.0.1", port: int = 0,
               api_key: str | None = None):
    """The shared embedded engine for ``path`` (default: the configured 1.5B model), not started."""
    from chops.llm.engine import EngineConfig, LocalEngine

    return LocalEngine.shared(EngineConfig(
        path=path or settings.model_path, threads=settings.local_threads, context_per_slot=settings.local_context,
        slots=settings.local_slots, host=host, port=port, api_key=api_key))
