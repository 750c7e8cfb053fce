"""The embedded model: llama-cpp-python in process, one loaded model shared by every role.

``LocalModel`` owns the ``llama_cpp.Llama`` (loaded on first use, guarded by one lock because a
llama context is not thread safe) and a RAM prefix cache, so the static head of each role's
prompt (instructions, operation list) is not re-evaluated on every call. ``ChatLlamaCppLocal``
wraps it as a langchain chat model that takes an OpenAI-style ``response_format`` and decodes
with llama.cpp's JSON-schema grammar, so the same ``ChatModelProvider`` serves it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from chops.llm.base import LLMError
from chops.llm.chat import ChatModelProvider
from chops.settings import RoleSettings

# The test suite sets this False (tests/conftest.py) so only tests marked ``local_model`` load it.
LOAD_ALLOWED = True
# Prefix states kept for reuse. A state holds the KV cache (~28 KB per token for Qwen2.5-1.5B) and
# a copy of the logits buffer (n_batch x n_vocab floats, ~311 MB): 3 GiB keeps ~8 role prefixes.
CACHE_BYTES = 3 << 30
_ROLE_OF = {"system": "system", "human": "user", "ai": "assistant"}


class LocalModel:
    """One GGUF file loaded once per process and shared by every role that uses it."""

    _registry: dict[tuple, "LocalModel"] = {}
    _registry_lock = threading.Lock()

    def __init__(self, path: Path, *, n_ctx: int = 4096, n_threads: int = 2):
        """Remember where the model is; nothing is loaded until ``chat`` is first called."""
        self.path = Path(path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.lock = threading.Lock()
        self._llama = None

    @classmethod
    def shared(cls, path: Path, *, n_ctx: int = 4096, n_threads: int = 2) -> "LocalModel":
        """The process-wide instance for this file and configuration (so app, CLI and tests share one)."""
        key = (str(Path(path).resolve()), n_ctx, n_threads)
        with cls._registry_lock:
            if key not in cls._registry:
                cls._registry[key] = cls(path, n_ctx=n_ctx, n_threads=n_threads)
            return cls._registry[key]

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory."""
        return self._llama is not None

    def _load(self):
        # Checked on every use, not only the first: another test may have loaded the shared model.
        if not LOAD_ALLOWED:
            raise LLMError("disabled", "the real local model is off in tests; mark the test `local_model` "
                                       "or use ScriptedLLM")
        if self._llama is not None:
            return self._llama
        if not self.path.is_file():
            raise LLMError("not_installed", f"no local model at {self.path}; run `chops model install`")
        try:
            import llama_cpp
        except ImportError as exc:
            raise LLMError("not_installed", f"llama-cpp-python is not installed ({exc})") from exc
        try:
            with _extra_buffers_off_on_amx(llama_cpp):
                llama = llama_cpp.Llama(model_path=str(self.path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                                        n_threads_batch=self.n_threads, verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise LLMError("not_installed", f"cannot load {self.path}: {exc}") from exc
        # Default llama-cpp-python only reuses the *previous* call's prefix; alternating roles
        # (classifier, executor, verifier) would then re-evaluate their whole prompt every time.
        llama.set_cache(_ram_cache(llama_cpp, CACHE_BYTES))
        self._llama = llama
        return llama

    def load(self) -> None:
        """Load the weights now (raises ``LLMError`` ``not_installed``/``disabled``)."""
        with self.lock:
            self._load()

    def chat(self, messages: list[dict], *, response_format: dict | None, temperature: float,
             max_tokens: int, timeout_s: float | None = None) -> tuple[dict, dict]:
        """One chat completion; returns the llama-cpp response and llama.cpp's own counters
        (``n_p_eval``: prompt tokens actually evaluated, ``t_p_eval_ms``, ``n_eval``, ``t_eval_ms``).

        ``timeout_s`` bounds the wait for the shared model (a running generation is not interrupted;
        ``max_tokens`` bounds it).
        """
        if not self.lock.acquire(timeout=-1 if timeout_s is None else timeout_s):
            raise LLMError("timeout", f"the local model stayed busy for {timeout_s} s")
        try:
            llama = self._load()
            _perf_reset(llama)
            t0 = time.perf_counter()
            resp = llama.create_chat_completion(messages=messages, response_format=response_format,
                                                temperature=temperature, max_tokens=max_tokens)
            perf = _perf(llama)
            perf["wall_s"] = time.perf_counter() - t0
            return resp, perf
        finally:
            self.lock.release()

    def close(self) -> None:
        """Free the weights (a later call loads them again)."""
        with self.lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None


def _ram_cache(llama_cpp, capacity_bytes: int):
    """A ``LlamaRAMCache`` that counts every byte a saved state holds.

    Upstream counts only the KV part (``llama_state_size``), not the logits copy each state also
    keeps, so its bound let the process grow past 18 GB in a benchmark here.
    """

    class FullyCountedRAMCache(llama_cpp.LlamaRAMCache):
        @property
        def cache_size(self) -> int:
            return sum(s.llama_state_size + s.scores.nbytes + s.input_ids.nbytes
                       for s in self.cache_state.values())

    return FullyCountedRAMCache(capacity_bytes=capacity_bytes)


def _cpu_has_amx() -> bool:
    try:
        return " amx_tile " in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


@contextlib.contextmanager
def _extra_buffers_off_on_amx(llama_cpp):
    """On CPUs advertising AMX, load without llama.cpp's "extra buffer types" (weight repacking).

    Why: on this project's VMs (AMX-capable Xeon under a hypervisor) the AMX-repacked weights make
    ``llama_decode`` segfault on the first token. ``Llama()`` has no parameter for it, so the
    defaults it starts from are patched for the duration of the load (which holds our lock).
    """
    if not _cpu_has_amx():
        yield
        return
    module = llama_cpp.llama_cpp
    original = module.llama_model_default_params

    def without_extra_buffers():
        params = original()
        params.use_extra_bufts = False
        return params

    module.llama_model_default_params = without_extra_buffers
    try:
        yield
    finally:
        module.llama_model_default_params = original


def _perf_reset(llama) -> None:
    import llama_cpp

    try:
        llama_cpp.llama_perf_context_reset(llama._ctx.ctx)
    except AttributeError:  # an older/newer binding without perf counters
        pass


def _perf(llama) -> dict:
    import llama_cpp

    try:
        data = llama_cpp.llama_perf_context(llama._ctx.ctx)
    except AttributeError:
        return {}
    return {"n_p_eval": data.n_p_eval, "t_p_eval_ms": data.t_p_eval_ms,
            "n_eval": data.n_eval, "t_eval_ms": data.t_eval_ms}


def llama_response_format(response_format: dict | None) -> dict | None:
    """OpenAI ``json_schema`` response format → llama-cpp's ``json_object`` + schema (grammar)."""
    if not response_format:
        return None
    if response_format.get("type") == "json_schema":
        return {"type": "json_object", "schema": response_format["json_schema"]["schema"]}
    return response_format


class ChatLlamaCppLocal(BaseChatModel):
    """A langchain chat model over a shared ``LocalModel`` (grammar-constrained JSON when asked)."""

    local: Any
    model_name: str = "local"
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float | None = None

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-local"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        msgs = [{"role": _ROLE_OF[m.type], "content": m.content} for m in messages]
        resp, perf = self.local.chat(msgs, response_format=llama_response_format(kwargs.get("response_format")),
                                     temperature=self.temperature, max_tokens=self.max_tokens,
                                     timeout_s=self.timeout_s)
        usage = resp.get("usage") or {}
        prompt_tokens = usage.get("prompt_tokens", 0)
        details = {}
        if "n_p_eval" in perf and prompt_tokens:
            # llama.cpp re-evaluates at least the last prompt token even on a full prefix hit.
            details["cache_read"] = max(0, prompt_tokens - max(perf["n_p_eval"], 1))
        message = AIMessage(
            content=resp["choices"][0]["message"]["content"] or "",
            usage_metadata={"input_tokens": prompt_tokens, "output_tokens": usage.get("completion_tokens", 0),
                            "total_tokens": usage.get("total_tokens", 0), "input_token_details": details},
            response_metadata={"model_name": self.model_name, "perf": perf,
                               "finish_reason": resp["choices"][0].get("finish_reason")},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


class LocalProvider(ChatModelProvider):
    """A role served by the shared embedded model, with the role's temperature and token limit."""

    def __init__(self, model: LocalModel, settings: RoleSettings):
        """Wrap the shared ``model`` with one role's decoding settings."""
        self.model_ref = model
        chat = ChatLlamaCppLocal(local=model, model_name=settings.model, temperature=settings.temperature,
                                 max_tokens=settings.max_tokens, timeout_s=settings.timeout_s)
        super().__init__("local", chat, settings, lambda exc: None)

    def close(self) -> None:
        """Free the shared model's weights."""
        self.model_ref.close()
