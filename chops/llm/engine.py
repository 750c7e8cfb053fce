"""The embedded model engine: llama.cpp's own server (``xllamacpp``) running inside this process.

``xllamacpp.Server`` loads a GGUF file and serves llama.cpp's OpenAI-compatible HTTP API on a
loopback port from native threads. The local provider talks to it with the same ``ChatOpenAI``
client as any other endpoint, so there is one request/response path for every provider; the
engine only owns the server's life cycle. An API key known only to this process guards the port.

``chops model serve`` runs the same engine on a fixed address for other processes (several
gunicorn workers or machines sharing one model): ``serve_forever``.

Prompt caching: the server keeps ``slots`` KV caches and gives each request the idle slot whose
cached prompt shares the longest prefix with it, so each role's static prompt head (instructions,
operation list) stays cached in "its" slot, and concurrent turns get other slots (continuous
batching). Idle slots are also saved to a RAM prompt cache. ``python -m bench.llm`` measures it.
"""

from __future__ import annotations

import secrets
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

from chops.llm.base import LLMError

# The test suite sets this False (tests/conftest.py) so only tests marked ``local_model`` load it.
LOAD_ALLOWED = True
_HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass(frozen=True)
class EngineConfig:
    """How to run one GGUF model: threads, context per slot, slots, address (port 0 = any free one)."""

    path: Path
    threads: int = 2
    context_per_slot: int = 4096
    slots: int = 6
    host: str = "127.0.0.1"
    port: int = 0
    ram_cache_mib: int = 2048
    api_key: str | None = None  # None: a random key only this process knows (embedded); "": no key


class LocalEngine:
    """One llama.cpp server for one model file, started on first use and shared by every role."""

    _registry: dict[EngineConfig, "LocalEngine"] = {}
    _registry_lock = threading.Lock()

    def __init__(self, config: EngineConfig):
        """Remember the configuration; nothing is loaded until ``start``."""
        self.config = config
        self.api_key = secrets.token_urlsafe(24) if config.api_key is None else config.api_key
        self._server = None
        self._lock = threading.Lock()

    @classmethod
    def shared(cls, config: EngineConfig) -> "LocalEngine":
        """The process-wide engine for ``config`` (the app, the CLI and the tests share one)."""
        with cls._registry_lock:
            if config not in cls._registry:
                cls._registry[config] = cls(config)
            return cls._registry[config]

    @property
    def started(self) -> bool:
        """Whether the weights are loaded and the server answers."""
        return self._server is not None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root (``…/v1``); starts the engine if needed."""
        return self.start().listening_address.rstrip("/") + "/v1"

    def start(self):
        """Load the model and start serving (idempotent). ``LLMError`` ``disabled``/``not_installed``."""
        # Checked on every use, not only the first: another test may have started the shared engine.
        if not LOAD_ALLOWED:
            raise LLMError("disabled", "the real local model is off in tests; mark the test `local_model` "
                                       "or use ScriptedLLM")
        with self._lock:
            if self._server is None:
                self._server = self._launch()
            return self._server

    def _launch(self):
        cfg = self.config
        if not cfg.path.is_file():
            raise LLMError("not_installed", f"no local model at {cfg.path}; run `chops model install`")
        try:
            import xllamacpp
        except ImportError as exc:
            raise LLMError("not_installed", f"the engine package xllamacpp is not installed ({exc})") from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(cfg.path)
        params.model_alias = {cfg.path.stem}  # the name replies carry (and `chops model serve` answers to)
        params.n_parallel = cfg.slots
        params.n_ctx = cfg.context_per_slot * cfg.slots  # split evenly between the slots
        params.cpuparams.n_threads = cfg.threads
        params.cpuparams_batch.n_threads = cfg.threads
        params.hostnames = [cfg.host]
        params.port = cfg.port
        if self.api_key:
            params.api_keys = [self.api_key]
        params.cache_ram_mib = cfg.ram_cache_mib
        params.verbosity = 0  # errors only; the trace records every call
        handlers = {sig: signal.getsignal(sig) for sig in _HANDLED_SIGNALS}
        try:
            server = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise LLMError("not_installed", f"cannot start the engine on {cfg.path}: {exc}") from exc
        _restore_signal_handlers(handlers)
        return server

    def close(self) -> None:
        """Stop the server and free the weights (a later call starts it again)."""
        with self._lock:
            self._server = None  # the native destructor stops the loop and joins its thread


def _restore_signal_handlers(handlers: dict) -> None:
    """Give SIGINT/SIGTERM back to Python (and so to gunicorn, click, pytest).

    Why: the server installs its own C handlers for them while starting, which would turn Ctrl-C and
    gunicorn's graceful stop into "stop the model loop" and leave the process running. Python can
    re-install its handlers only from the main thread, which is why the service and the CLI start
    the engine there (``create_app`` does it before serving).
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, handler in handlers.items():
        if handler is not None:
            signal.signal(sig, handler)


def serve_forever(config: EngineConfig) -> None:
    """Run the engine on ``config``'s address until SIGINT/SIGTERM (``chops model serve``)."""
    engine = LocalEngine(config)
    engine.start()
    stop = threading.Event()
    for sig in _HANDLED_SIGNALS:
        signal.signal(sig, lambda *_: stop.set())
    print(f"serving {config.path.name} at {engine.base_url} "
          f"({config.slots} slots, {config.threads} threads); Ctrl-C stops", flush=True)
    stop.wait()
    engine.close()

