"""All settings, read from the environment (prefix ``CHOPS_``) in this one module.

Nested settings use ``__`` as the delimiter, e.g. ``CHOPS_ROLES__EXECUTOR__MODEL=gpt-4-0125-preview``.
Nothing else in the code reads ``os.environ`` for configuration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[1]

Role = Literal["classifier", "executor", "verifier", "chooser", "judge"]
ROLES: tuple[Role, ...] = ("classifier", "executor", "verifier", "chooser", "judge")

# The paper's Table 5 prices, USD per 1M tokens (input, output).
KNOWN_PRICES: dict[str, tuple[float, float]] = {
    "gpt-3.5-turbo": (1.5, 2.0),
    "gpt-4-0125-preview": (10.0, 30.0),
}


MODEL_15B_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_05B_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m"


class ModelEntry(BaseModel):
    """A model a role's tier can name: where it is served and at what price (``Settings.models``)."""

    provider: Literal["local", "openai", "scripted"] = "local"
    model: str = MODEL_15B_NAME
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    llama_cpp: bool = False
    price_in_per_m: float | None = None
    price_out_per_m: float | None = None


# The tiers every deployment can name without configuring them: the two embedded models.
BUILTIN_MODELS: dict[str, ModelEntry] = {
    "local-0.5b": ModelEntry(model=MODEL_05B_NAME),
    "local-1.5b": ModelEntry(model=MODEL_15B_NAME),
}


class RoleSettings(BaseModel):
    """How one pipeline role (classifier, executor, ...) reaches its model."""

    provider: Literal["local", "openai", "scripted"] = "local"
    model: str = MODEL_15B_NAME
    tiers: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="ordered model names (``local-0.5b``, ``local-1.5b`` or a key of "
        "``Settings.models``), cheapest first: iteration 1 uses the first, a rejected attempt moves the next "
        "iteration one tier up. Empty: this role's own provider/model is its only tier. Comma-separated in "
        "the environment (CHOPS_ROLES__EXECUTOR__TIERS=local-0.5b,local-1.5b)")
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 120.0
    llama_cpp: bool = Field(default=False, description="the endpoint is a llama.cpp server (e.g. `chops model "
                            "serve`): ask for compact JSON and prompt caching; the local provider always is")
    price_in_per_m: float | None = Field(default=None, description="USD per 1M input tokens; None = known price or 0")
    price_out_per_m: float | None = Field(default=None, description="USD per 1M output tokens; None = known price or 0")

    @field_validator("tiers", mode="before")
    @classmethod
    def _split_tiers(cls, value: Any) -> Any:
        if isinstance(value, str):  # the environment's "a,b" (or a JSON list)
            text = value.strip()
            return json.loads(text) if text.startswith("[") else [p.strip() for p in text.split(",") if p.strip()]
        return value

    def prices(self) -> tuple[float, float]:
        """(input, output) USD per 1M tokens: explicit setting, else the paper's price, else 0."""
        known = KNOWN_PRICES.get(self.model, (0.0, 0.0)) if self.provider != "local" else (0.0, 0.0)
        return (
            known[0] if self.price_in_per_m is None else self.price_in_per_m,
            known[1] if self.price_out_per_m is None else self.price_out_per_m,
        )


class Roles(BaseModel):
    """One ``RoleSettings`` per pipeline role."""

    # Output caps that fit each role's compact JSON with room to spare (they bound the worst case:
    # generation costs ~60-90 ms a token on 2 cores): a route is <12 tokens, a short reason + score
    # ~30, an operation call ~25, a guide answer up to a few sentences.
    classifier: RoleSettings = RoleSettings(max_tokens=32)
    executor: RoleSettings = RoleSettings(max_tokens=384)
    # A reason clipped at 300 characters is ~75 tokens and the JSON around it ~15: at 96, a rambling reason was cut off,
    # and the retry's verdict was "Invalid JSON: EOF while parsing", score 1, for a right return (train task 10).
    verifier: RoleSettings = RoleSettings(max_tokens=160)
    chooser: RoleSettings = RoleSettings(max_tokens=16)
    judge: RoleSettings = RoleSettings(max_tokens=512)  # reason first: 192 tokens cut its JSON short

    @model_validator(mode="before")
    @classmethod
    def _keep_role_caps(cls, data: Any) -> Any:
        # A role given only some fields (CHOPS_ROLES__EXECUTOR__TIERS=...) keeps its own output cap,
        # not RoleSettings' generic default.
        if isinstance(data, dict):
            for role, value in data.items():
                if isinstance(value, dict) and role in cls.model_fields and "max_tokens" not in value:
                    data[role] = {**value, "max_tokens": cls.model_fields[role].default.max_tokens}
        return data

    def get(self, role: str) -> RoleSettings:
        """The settings of ``role``; an unknown role is a ``KeyError``."""
        if role not in ROLES:
            raise KeyError(f"unknown role {role!r}; known: {', '.join(ROLES)}")
        return getattr(self, role)


class Settings(BaseSettings):
    """Every knob of the service, the CLI, the pipeline and the evaluation."""

    model_config = SettingsConfigDict(env_prefix="CHOPS_", env_nested_delimiter="__", extra="ignore")

    # --- the business ------------------------------------------------------------------
    domain: str = Field(default="cphos", description="the domain pack (a ``chops.domains`` entry point) whose "
                        "system the agent serves")

    # --- storage -------------------------------------------------------------------
    data_dir: Path = Field(default=Path.home() / ".local" / "share" / "chops",
                           description="model file, SQLite database, guide indexes")
    database_url: str | None = Field(default=None, description="SQLAlchemy URL; default sqlite file in data_dir")
    cphos_dir: Path = Field(default=REPO_ROOT.parent / "shared" / "cphos", description="the CPHOS-dataset")

    # --- guides and retrieval ------------------------------------------------------
    guides_dir: Path = REPO_ROOT / "guides"
    embedder: Literal["use-numpy", "tfhub", "openai"] = "use-numpy"
    embedder_handle: str | None = Field(default=None, description="tfhub handle/path or openai embedding model")
    embedder_base_url: str | None = None
    embedder_api_key: SecretStr | None = Field(default=None, description="key for the openai embedder, if it needs one")
    embedder_threads: int = Field(default=1, ge=1, description="BLAS threads of the use-numpy embedder")
    retrieval_mode: Literal["dense", "fused"] = Field(
        default="dense", description="dense only, or dense + BM25 by reciprocal rank fusion; fused measured "
        "no better on the CPHOS guides (python -m bench.retrieval), so dense, the cheaper, is the default")
    chunk_short: int = Field(default=300, description="characters per classifier chunk")
    # 600 x 3 rather than 1200 x 3: on the visible CPHOS guide rows every question keeps the answer
    # coverage it had (20/28 covered, the other 8 a paraphrase no size fixes), the guides' own FAQ
    # entries are covered better (21/25, was 20), and the executor reads 17 % fewer characters
    # (1,023 instead of 1,238, 235 tokens instead of 280); two excerpts lose a question at any size.
    # Measured with python -m bench.retrieval (the excerpt table).
    chunk_long: int = Field(default=600, description="characters per executor chunk")
    k_short: int = 3
    k_long: int = Field(default=3, description="excerpts the guide executor reads")
    guide_max_bytes: int = Field(default=20 * 1024 * 1024, ge=1, description="largest guide file staff may upload")
    guide_wait_s: float = Field(default=60.0, ge=0, description="how long an upload, replace or delete request "
                                "waits for its re-index before answering 202 (the re-index goes on)")
    classifier_chunks: bool = Field(
        default=False, description="show the level-2 classifier k_short short guide chunks (the paper's design); "
        "off by default: with the 1.5B local model they pulled how-to questions to the system route "
        "(45/56 routed right with chunks, 55/56 without)")

    # --- models --------------------------------------------------------------------
    local_model_path: Path | None = Field(default=None, description="a GGUF file; default: the installed model")
    local_threads: int = Field(default=2, ge=1, description="CPU threads of the embedded engine")
    local_context: int = Field(default=6144, ge=512, description="tokens of context per engine slot")
    local_slots: int = Field(default=10, ge=1, description="engine slots: cached prompts and concurrent calls "
                             "(9 static prompt heads in the default architecture, plus one)")
    warm_on_start: bool = Field(default=True, description="the service loads the local model and caches every "
                                "prompt head before /readyz says ready")
    roles: Roles = Roles()
    models: dict[str, ModelEntry] = Field(
        default_factory=dict, description="extra models tiers can name, e.g. CHOPS_MODELS__BIG__PROVIDER=openai "
        "(keys are lower-cased); the built-in local-0.5b and local-1.5b need no entry")

    # --- solution memory (EcoAssistant's demonstrations) -----------------------------
    # Off by default: it stores users' request texts (a write's arguments can name people) and its effect
    # on accuracy is not measured yet; an evaluation turns it on in its config (eval/configs/ecoassistant.toml).
    memory_enabled: bool = Field(default=False, description="remember verified solutions and show the most "
                                 "similar ones to the classifier and executor as demonstrations")
    memory_k: int = Field(default=2, ge=0, le=10, description="demonstrations shown per turn, at most")
    memory_floor: float = Field(default=0.75, ge=-1, le=1, description="cosine similarity (USE) a past request "
                                "needs to be shown as a demonstration")

    # --- router ----------------------------------------------------------------------
    router_enabled: bool = Field(default=True, description="the embedding router decides the route of the "
                                 "messages it is sure of without a model call (chops.router)")
    router_examples: Path | None = Field(default=None, description="labelled example messages the router is "
                                         "trained on; unset: the domain pack's own")

    # --- pipeline ------------------------------------------------------------------
    architecture: Literal["executor_only", "ce_1level", "cev_1level", "cev_2level"] = "cev_2level"
    max_iterations: int = Field(default=5, ge=1, le=10)
    verify_start: float = Field(default=8.0, ge=1, le=10, description="threshold at the first iteration")
    verify_end: float = Field(default=5.0, ge=1, le=10, description="threshold at the last iteration")
    # operations, not on_fail: the score alone passed two profile answers to change requests ("switch me to
    # problem 7" answered with the current problem) that the reasoned verdict rejects
    # (tests/integration/test_verifier_local_model.py). For operations it kept Acc_sys/Acc_file at 100 % on
    # the visible rows and an operation's turn p50 fell from 6.0 s to 4.2 s (chops eval --per-group 1).
    verifier_reason: Literal["first", "on_fail", "operations"] = Field(
        default="operations", description="'first': every verdict is a reason then a score (the paper's way); "
        "'on_fail': a score alone first, and only a score under the pass mark asks for the reasoned verdict, "
        "which then decides (a pass costs ~5 generated tokens instead of ~30; python -m bench.ask --vs-previous); "
        "'operations': on_fail for a proposed operation (judged on its dry run), first for an answer")
    verifier_profile: Literal["all", "related"] = Field(
        default="related", description="what a profile answer's verifier reads of the profile: 'all' of it, or "
        "'related': the lines sharing a word with the message or the answer (all of them when none does)")
    guide_profile: Literal["always", "unsure"] = Field(
        default="unsure", description="when the guide executor also sees the sender's profile: 'always', or "
        "'unsure': only when the embedding router was not sure of the guide route (a question about one's own "
        "details that reached the guides still gets answered; a sure guide question reads ~120 tokens less)")
    router_keeps_route: bool = Field(
        default=True, description="a retry after a rejection keeps the route the embedding router was sure of "
        "(the feedback goes to the executor); from the third attempt the model classifier re-routes with the "
        "verifier's reason, as in the paper. False: every retry asks the model classifier")
    executor_steps: int = Field(default=8, ge=1, le=20, description="model steps the operations executor may take "
                                "in one attempt: look-ups it reads, then the write(s) or the answer")
    id_choices: bool = Field(
        default=True, description="an id argument the pack says comes from look-ups (CHOICES_FROM) is chosen, in the "
        "executor's grammar, among the ids the profile and this turn's look-ups listed or the user typed; "
        "False: free text, grounded after the fact")
    tool_top_k: int = Field(default=0, ge=0, description="tool retrieval: the operations route shows the executor "
                            "only the operations most similar to the message (and the look-ups they need); 0 = all")
    tool_layout: Literal["cached", "inline"] = Field(
        default="cached", description="where tool retrieval's short list goes: cached = the whole list stays in "
        "the cached system part and only the plan's grammar is narrowed; inline = the short list in the user part")
    reading: Literal["pack", "steps", "typed"] = Field(
        default="pack", description="how the operations route reads a message: the pack's way (DomainPack.reading), "
        "'steps' (the executor's plan of calls after look-ups) or 'typed' (one typed reading a step, values kept "
        "across turns and grounded by their kinds: chops.pipeline.read)")
    confirm_writes: Literal["pack", "all", "none"] = Field(
        default="pack", description="which writes wait for the user's yes: those the domain pack marks `confirm`, "
        "every write, or none")
    confirm_ttl_s: float = Field(default=900.0, gt=0, description="how long a change described to the user waits "
                                 "for their yes before it lapses")

    # --- service -------------------------------------------------------------------
    demo_mode: bool = False
    secret_key: str | None = Field(default=None, description="HS256 JWT secret shared with the host site")
    jwt_audience: str | None = Field(default=None, description="required 'aud' of user tokens; unset = not checked")
    jwt_issuer: str | None = Field(default=None, description="required 'iss' of user tokens; unset = not checked")
    jwks: str | None = Field(default=None, description="JWKS file path or URL of the host site's RS256/ES256 keys")
    jwt_leeway_s: float = Field(default=30.0, ge=0, le=300, description="clock skew allowed on exp/iat/nbf")
    staff_api_key: str | None = None
    max_message_chars: int = 2000
    abandon_after_s: float = Field(default=86400.0, gt=0, description="a conversation handed to staff and not "
                                   "answered for this long counts as abandoned (chops.outcomes)")
    staff_presence_s: float = Field(default=600.0, gt=0, description="a staff member counts as active for this "
                                    "long after their last request; with nobody active a handed-over user is "
                                    "told that a person will answer later")
    event_stream_s: float = Field(default=30.0, gt=0, le=600, description="an event stream ends after this "
                                  "long (the client reconnects with Last-Event-ID): it holds a server thread")
    event_poll_s: float = Field(default=0.2, gt=0, le=5, description="how often a process reads the event log "
                                "for the conversations its streams listen to")

    # --- load and abuse ---------------------------------------------------------------
    admission_enabled: bool = Field(default=True, description="turns wait in one FIFO queue in front of the "
                                    "model (chops.admission); off: every turn runs at once, as before")
    admission_capacity: int = Field(default=1, ge=1, description="turns that run on the model at once; on two "
                                    "cores two at once each took 2.2x as long (python -m bench.burst): one")
    admission_max_wait_s: float = Field(default=20.0, gt=0, description="a turn expected to wait longer is "
                                        "refused at once with 429 busy and Retry-After")
    admission_turn_s: float = Field(default=8.0, gt=0, description="one turn's length before any was measured "
                                    "(then a moving average of the admitted turns)")
    rate_limit_storage: str = Field(default="memory://", description="Flask-Limiter storage URI shared by the "
                                    "workers, e.g. redis://127.0.0.1:6379 (memory:// counts per process)")
    rate_limit_user: str = Field(default="12 per minute", description="messages one signed-in user may send")
    rate_limit_conversation: str = Field(default="6 per minute", description="messages to one conversation")
    rate_limit_global: str = Field(default="300 per minute", description="messages to the whole service")
    rate_limit_staff: str = Field(default="300 per minute", description="staff API and console requests per "
                                  "staff member (or address, before sign-in)")
    max_open_conversations: int = Field(default=5, ge=1, description="conversations one user may have open, "
                                        "started in the last hour and not closed")
    signin_max_failures: int = Field(default=5, ge=1, description="failed staff sign-ins per account and per "
                                     "address within signin_window_s before sign-in is refused unchecked")
    signin_window_s: int = Field(default=900, ge=1, description="the window of signin_max_failures")
    trusted_proxies: int = Field(default=0, ge=0, le=5, description="reverse proxies in front of the service "
                                 "whose X-Forwarded-For/-Proto are believed (werkzeug ProxyFix)")
    cookie_secure: bool | None = Field(default=None, description="console cookies only over HTTPS; unset: on "
                                       "outside demo mode")
    widget_frame_ancestors: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="host sites allowed to embed the widget page in a frame "
        "(comma-separated origins); the service's own origin always may")

    @field_validator("widget_frame_ancestors", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [p.strip() for p in value.split(",") if p.strip()]
        return value

    # --- telemetry -----------------------------------------------------------------
    # OTLP traces are on when the standard OTEL_EXPORTER_OTLP_ENDPOINT is set (read by the exporter
    # itself, with the other OTEL_* variables); this is the one switch the service reads.
    otel_endpoint: str | None = Field(default=None, validation_alias="OTEL_EXPORTER_OTLP_ENDPOINT",
                                      description="OTLP collector; unset = no traces, no cost")

    @property
    def resolved_database_url(self) -> str:
        """The database URL, defaulting to a SQLite file in the data directory."""
        return self.database_url or f"sqlite:///{self.data_dir / 'chops.db'}"

    @property
    def model_path(self) -> Path:
        """Where the local GGUF model is read from (and installed to by default)."""
        return self.local_model_path or self.data_dir / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"

    @property
    def small_model_path(self) -> Path:
        """Where the small local model (Qwen2.5-Coder-0.5B, same tokenizer) is installed."""
        return self.data_dir / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def role_tiers(settings: Settings, role: str) -> list[tuple[str, RoleSettings]]:
    """``role``'s tiers, cheapest first: (name, the role's settings with that model's fields). A role
    without ``tiers`` has one tier, named after its model. An unknown name is a ``KeyError``."""
    rs = settings.roles.get(role)
    if not rs.tiers:
        return [(rs.model, rs)]
    models = {key.lower(): entry for key, entry in settings.models.items()}  # the environment lower-cases keys
    out = []
    for name in rs.tiers:
        entry = models.get(name.lower()) or BUILTIN_MODELS.get(name)
        if entry is None:
            known = sorted({*BUILTIN_MODELS, *settings.models})
            raise KeyError(f"role {role}: unknown tier model {name!r}; known: {', '.join(known)}")
        out.append((name, rs.model_copy(update={**entry.model_dump(), "tiers": []})))
    return out


def get_settings(**overrides) -> Settings:
    """Settings from the environment, with keyword overrides (e.g. from CLI flags)."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
