"""Model warm-up at service start: ``/readyz`` says ready only once the prompt heads are cached."""

from __future__ import annotations

import logging
import threading
from typing import Any

log = logging.getLogger(__name__)


class Warmup:
    """Loads the local model from the main thread, then caches the prompt heads in the background."""

    def __init__(self, agent: Any):
        """Start now: the engine synchronously (its signal handlers must be undone in the main
        thread), the per-role prompt heads in a daemon thread."""
        self.done = threading.Event()
        self.error: str | None = None
        self.heads = 0
        try:
            agent.llm.load()
        except Exception as exc:  # noqa: BLE001 - reported by /readyz, the app still serves
            self._failed(exc)
            return
        threading.Thread(target=self._run, args=(agent,), name="chops-warmup", daemon=True).start()

    def _run(self, agent: Any) -> None:
        try:
            self.heads = agent.warm()
        except Exception as exc:  # noqa: BLE001
            self._failed(exc)
        self.done.set()

    def _failed(self, exc: Exception) -> None:
        log.error("model warm-up failed: %s", exc)
        self.error = f"{type(exc).__name__}: {exc}"
        self.done.set()

    def status(self) -> dict:
        """{"ok": bool, "detail": str} for /readyz."""
        if not self.done.is_set():
            return {"ok": False, "detail": "warming up the model"}
        if self.error:
            return {"ok": False, "detail": self.error}
        return {"ok": True, "detail": f"{self.heads} prompt heads cached"}
