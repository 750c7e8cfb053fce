"""``build_llm``: per-role providers from settings; every local role shares one engine."""

from __future__ import annotations

from chops.llm.base import LLM
from chops.settings import ROLES, Settings


def build_llm(settings: Settings) -> LLM:
    """An ``LLM`` with one adapter per role as configured in ``settings.roles``.

    Nothing is loaded or connected here: the local engine starts on its first call, so building is
    cheap (the app factory and the CLI can build one unconditionally). Roles with provider
    ``scripted`` share one ``ScriptedProvider``, exposed as ``llm.script`` for tests to fill.
    """
    providers = {}
    local_engine = None
    script = None
    for role in ROLES:
        rs = settings.roles.get(role)
        if rs.provider == "local":
            from chops.llm.local_provider import LocalProvider

            local_engine = local_engine or engine_for(settings)
            providers[role] = LocalProvider(local_engine, rs)
        elif rs.provider == "openai":
            from chops.llm.openai_provider import OpenAIProvider

            providers[role] = OpenAIProvider(rs)
        elif rs.provider == "scripted":
            from chops.llm.scripted import ScriptedProvider

            script = script or ScriptedProvider()
            providers[role] = script
        else:  # pragma: no cover - settings validation forbids it
            raise ValueError(f"unknown provider {rs.provider!r} for role {role}")
    llm = LLM(providers)
    llm.script = script  # type: ignore[attr-defined]
    return llm


def engine_for(settings: Settings, *, host: str = "127.0.0.1", port: int = 0, api_key: str | None = None):
    """The shared embedded engine for the configured local model (not started)."""
    from chops.llm.engine import EngineConfig, LocalEngine

    return LocalEngine.shared(EngineConfig(
        path=settings.model_path, threads=settings.local_threads, context_per_slot=settings.local_context,
        slots=settings.local_slots, host=host, port=port, api_key=api_key))
