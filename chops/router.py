"""The embedding router: the route of most messages without a model call.

Three of a turn's five model calls only decided where a message goes (the small-talk gate, level 1,
level 2). A message's USE embedding (the multilingual encoder the guide index has loaded already)
decides the same question in milliseconds for the messages it is sure of: a multinomial logistic
regression over the embeddings, trained from labelled examples: the pack author's kit's conversational ones
(``KIT_EXAMPLES``: greetings, thanks and goodbyes, "never mind", asking for a person, off-topic questions, the same
for every business) and the domain pack's own (``DomainPack.router_examples``: made-up wordings of its profile, guide
and operation routes, and any conversational wording that names its business), in English and Chinese. A text in
both keeps the pack's route. Where it is not sure — its top probability under a threshold calibrated on held-apart
examples — the model classifier decides, as before.

Calibration: every fourth example of each route is held apart; a model trained on the rest gives the
held-apart examples' probabilities, and the threshold is the smallest one at which every held-apart
example the router would decide is decided right (never below ``MIN_THRESHOLD``). The router that is
used is then trained on all examples, with that threshold.

The trained router is a small ``.npz`` in ``<data_dir>/router/``, named by a hash of both examples files and
the embedder: ``chops router train`` builds it, and a service whose examples or embedder changed builds
it at start (a few seconds) instead of loading a stale one.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

ROUTES = ("greeting", "thanks", "cancel", "handoff", "out_of_scope", "basic_info", "guide", "system")
MIN_THRESHOLD = 0.6  # below this even a perfect calibration set proves little (it holds ~50 examples)
EPOCHS, RATE, L2 = 1000, 5.0, 1e-4  # full-batch gradient descent on ~400 x 512: about a second
# The conversational examples every business shares (the kit's): packs add only their own.
KIT_EXAMPLES = Path(__file__).resolve().parent / "domain" / "router_examples.jsonl"


@dataclass(frozen=True)
class Decision:
    """The router's answer for one message: its best route, that route's probability, and whether it is
    sure enough to be used without asking the model."""

    route: str
    confidence: float
    sure: bool


def read_examples(path: Path) -> list[tuple[str, str]]:
    """``(text, route)`` pairs of a JSONL file of ``{"text", "route"}`` objects; an unknown route is an error."""
    pairs = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row["route"] not in ROUTES:
            raise ValueError(f"{path}:{n}: unknown route {row['route']!r}; known: {', '.join(ROUTES)}")
        pairs.append((row["text"], row["route"]))
    return pairs


def training_files(examples_path: Path) -> tuple[Path, ...]:
    """The files a router for ``examples_path`` (a pack's examples) is trained on: the kit's, then the pack's."""
    if Path(examples_path).resolve() == KIT_EXAMPLES:
        return (KIT_EXAMPLES,)
    return KIT_EXAMPLES, Path(examples_path)


def training_examples(examples_path: Path) -> list[tuple[str, str]]:
    """``(text, route)`` pairs of ``training_files(examples_path)``, each text once: where the kit and the pack have
    the same text (case-blind), the pack's route is kept (for an airline "book me a flight" is no off-topic
    question)."""
    pairs: dict[str, tuple[str, str]] = {}
    for path in training_files(examples_path):
        for text, route in read_examples(path):
            key = " ".join(text.split()).casefold()
            pairs.pop(key, None)  # the later file's label, at the later file's place
            pairs[key] = (text, route)
    return list(pairs.values())


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression (softmax) by full-batch gradient descent with an L2 penalty."""
    w = np.zeros((x.shape[1], len(ROUTES)), dtype=np.float64)
    b = np.zeros(len(ROUTES), dtype=np.float64)
    onehot = np.eye(len(ROUTES))[y]
    for _ in range(EPOCHS):
        p = _softmax(x @ w + b)
        grad = p - onehot
        w -= RATE * (x.T @ grad / len(x) + L2 * w)
        b -= RATE * grad.mean(axis=0)
    return w, b


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _calibrate(x: np.ndarray, y: np.ndarray) -> float:
    """The smallest threshold at which no held-apart example the router would decide is decided wrong."""
    held = np.zeros(len(y), dtype=bool)
    for route in range(len(ROUTES)):
        idx = np.flatnonzero(y == route)
        held[idx[3::4]] = True
    w, b = _fit(x[~held], y[~held])
    p = _softmax(x[held] @ w + b)
    top, best = p.max(axis=1), p.argmax(axis=1)
    wrong = top[best != y[held]]
    return float(max(MIN_THRESHOLD, min(0.99, wrong.max() + 1e-6 if wrong.size else MIN_THRESHOLD)))


class Router:
    """A trained router: ``decide(text)``; ``threshold`` is the calibrated probability it needs."""

    def __init__(self, weights: np.ndarray, bias: np.ndarray, threshold: float, embedder) -> None:
        self.weights, self.bias, self.threshold, self.embedder = weights, bias, threshold, embedder

    @classmethod
    def train(cls, examples: list[tuple[str, str]], embedder) -> "Router":
        """Calibrate on held-apart examples, then fit on all of them."""
        x = np.asarray(embedder.embed([text for text, _ in examples]), dtype=np.float64)
        y = np.array([ROUTES.index(route) for _, route in examples])
        threshold = _calibrate(x, y)
        w, b = _fit(x, y)
        return cls(w, b, threshold, embedder)

    def decide(self, text: str) -> Decision:
        """The route of ``text`` and whether the router is sure of it."""
        x = np.asarray(self.embedder.embed([text]), dtype=np.float64)
        p = _softmax(x @ self.weights + self.bias)[0]
        best = int(p.argmax())
        return Decision(route=ROUTES[best], confidence=round(float(p[best]), 4), sure=bool(p[best] >= self.threshold))

    def save(self, path: Path) -> None:
        """Write the trained weights and threshold (``.npz``)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, weights=self.weights, bias=self.bias, threshold=np.array(self.threshold))
        tmp.replace(path)  # atomic: a worker starting meanwhile never reads half a file

    @classmethod
    def load(cls, path: Path, embedder) -> "Router":
        """A router saved by ``save``."""
        with np.load(path) as data:
            return cls(data["weights"], data["bias"], float(data["threshold"]), embedder)


def artefact_path(data_dir: Path, examples_path: Path, embedder_name: str) -> Path:
    """Where the router for these examples (the kit's and ``examples_path``) and this embedder is kept (the name
    changes with either file or the embedder)."""
    digest = hashlib.sha256()
    for path in training_files(examples_path):
        data = path.read_bytes()
        digest.update(len(data).to_bytes(8, "big") + data)  # lengths: no two splits of the bytes hash alike
    digest.update(embedder_name.encode())
    return data_dir / "router" / f"router-{digest.hexdigest()[:16]}.npz"


def build_router(data_dir: Path, examples_path: Path, embedder, *, rebuild: bool = False) -> Router:
    """The router for the kit's examples and those at ``examples_path``: loaded when built already, else trained and
    saved."""
    path = artefact_path(data_dir, examples_path, getattr(embedder, "name", type(embedder).__name__))
    if path.is_file() and not rebuild:
        return Router.load(path, embedder)
    router = Router.train(training_examples(examples_path), embedder)
    router.save(path)
    log.info("router trained on %s: threshold %.3f, saved to %s", examples_path, router.threshold, path)
    return router


def router_for(settings, pack, index=None) -> Router | None:
    """The deployment's router (None when ``router_enabled`` is off or the architecture has no two-level
    classifier), trained on the kit's examples and ``router_examples`` or else the domain pack's: the guide index's
    embedder when there is one (its model is loaded already), else the configured one."""
    if not settings.router_enabled or settings.architecture != "cev_2level":
        return None
    from chops.retrieval.embedders import make_embedder

    embedder = getattr(index, "embedder", None) or make_embedder(settings)
    return build_router(settings.data_dir, settings.router_examples or pack.router_examples, embedder)
