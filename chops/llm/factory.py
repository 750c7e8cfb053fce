"""``build_llm``: per-role providers from settings; every local role shares one loaded model."""

from __future__ import annotations

from chops.llm.base import LLM
from chops.settings import ROLES, Settings


def build_llm(settings: Settings) -> LLM:
    """An ``LLM`` with one adapter per role as configured in ``settings.roles``.

    Nothing is loaded or connected here: the local model loads on its first call, so building is
    cheap (the app factory and the CLI can build one unconditionally). Roles with provider
    ``scripted`` share one ``ScriptedProvider``, exposed as ``llm.script`` for tests to fill.
    """
    providers = {}
    local_model = None
    script = None
    for role in ROLES:
        rs = settings.roles.get(role)
        if rs.provider == "local":
            from chops.llm.local_provider import LocalModel, LocalProvider

            if local_model is None:
                local_model = LocalModel.shared(settings.model_path, n_ctx=settings.local_context,
                                                n_threads=settings.local_threads)
            providers[role] = LocalProvider(local_model, rs)
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
