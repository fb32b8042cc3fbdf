"""The gateway's YAML config: models, their backends, prices, compute figures, logprob capture."""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gateway.governance.budgets.config import BudgetConfig
from gateway.rate_limit_config import RateLimitConfig
from gateway.retention.classes import check_retention_days
from gateway.routing_config import PrefixAffinityConfig, RoutingPolicy
from gateway.shedding_config import PriorityConfig, SheddingConfig
from gateway.url_credentials import refuse_userinfo
from plumbline.answers.specs import AnswerSpec


class LogprobMode(StrEnum):
    """How much of the backend's logprobs the gateway captures."""

    OFF = "off"
    SAMPLED = "sampled"
    TOP_K = "top_k"


class _Strict(BaseModel):
    """Config sections refuse unknown keys, so a typo is an error, not a silent default."""

    model_config = ConfigDict(extra="forbid")


class LogprobCapture(_Strict):
    """Logprob capture for one model; default is the top 5 alternatives per token."""

    mode: LogprobMode = LogprobMode.TOP_K
    k: int = Field(default=5, ge=0, le=20)
    backend_mode: str = Field(
        default="raw_logprobs", description="The backend's --logprobs-mode, recorded with each call"
    )

    @field_validator("mode", mode="before")
    @classmethod
    def _yaml_off(cls, value: object) -> object:
        # YAML 1.1 reads a bare `off` as false.
        return LogprobMode.OFF if value is False else value

    @property
    def upstream_k(self) -> int | None:
        """The top_logprobs value to ask upstream for, or None when capture is off."""
        if self.mode is LogprobMode.OFF:
            return None
        return self.k if self.mode is LogprobMode.TOP_K else 0


class Price(_Strict):
    """Price per million tokens, input and output billed separately; audio per minute."""

    input_per_million: float = Field(default=0.0, ge=0)
    output_per_million: float = Field(default=0.0, ge=0)
    # Speech-to-text calls: the audio taken in, added to the input cost.
    audio_per_minute: float = Field(default=0.0, ge=0)


class BackendConfig(_Strict):
    """One server that can serve the model."""

    url: str
    api_key: str | None = None

    @field_validator("url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return refuse_userinfo(value, "a backend URL").rstrip("/")


class ModelConfig(_Strict):
    """A model clients can name, and how the gateway serves and meters it."""

    name: str
    provider: str = "vllm"
    upstream_model: str | None = None
    backends: list[BackendConfig] = Field(default_factory=list)
    litellm_model: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    price: Price = Field(default_factory=Price)
    parameters: float | None = Field(default=None, description="Parameter count, for FLOPs")
    weight_bytes: float | None = Field(default=None, description="Bytes of weights read per step")
    memory_bandwidth: float | None = Field(default=None, description="Bytes per second of HBM")
    logprobs: LogprobCapture = Field(default_factory=LogprobCapture)
    max_concurrency: int | None = Field(default=None, ge=1)
    # The backends run vLLM with --scheduling-policy priority: the gateway then sets each
    # call's `priority` by its source (`priorities`), whatever the client sent.
    priority_scheduling: bool = False
    priorities: PriorityConfig = Field(default_factory=PriorityConfig)
    # Shed calls when the backends are saturated (docs/reliability.md); None: never.
    shedding: SheddingConfig | None = None
    # Hosts whose http(s) media URLs clients may send (exact names, as vLLM compares them);
    # start the backends with the same --allowed-media-domains. Others must be `data:` URLs.
    allowed_media_domains: tuple[str, ...] = ()
    # The backends run vLLM with VLLM_ENABLE_RESPONSES_API_STORE=1: `/v1/responses` may then
    # store responses (retrieve, cancel, `background`, `previous_response_id`), each owned by
    # the team that created it. Off: `store` is sent false and those features are refused.
    responses_store: bool = False
    # vLLM never evicts a stored response: what one team may keep on this model's backends.
    max_stored_responses_per_team: int = Field(default=10_000, ge=1)
    # vLLM's `--runner` of the model's backends: `generate` serves chat, completions and
    # responses; `pooling` serves embeddings, pooling, classify, score and rerank. A call of the
    # other kind is refused; the health monitor takes out a backend that answers otherwise.
    runner: Literal["generate", "pooling"] = "generate"
    # How a backend is chosen among several (docs/operations.md, "Routing over a fleet").
    routing: RoutingPolicy = RoutingPolicy.LEAST_IN_FLIGHT
    prefix_affinity: PrefixAffinityConfig = Field(default_factory=PrefixAffinityConfig)

    @field_validator("allowed_media_domains")
    @classmethod
    def _lower_hosts(cls, hosts: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(host.strip().lower() for host in hosts)

    @field_validator("api_base")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        return value if value is None else refuse_userinfo(value, "a model's api_base")

    @model_validator(mode="after")
    def _check_route(self) -> ModelConfig:
        if self.provider == "vllm" and not self.backends:
            raise ValueError(f"model {self.name!r}: a vllm model needs at least one backend url")
        if self.provider == "litellm" and not self.litellm_model:
            raise ValueError(f"model {self.name!r}: a litellm model needs litellm_model")
        if self.provider not in ("vllm", "litellm"):
            raise ValueError(f"model {self.name!r}: provider must be 'vllm' or 'litellm'")
        if self.shedding is not None and self.provider != "vllm":
            raise ValueError(f"model {self.name!r}: shedding reads vLLM backends' load; vllm only")
        return self

    @property
    def served_name(self) -> str:
        """The model name sent upstream."""
        return self.upstream_model or self.name


class BackendLimits(_Strict):
    """Bounds on what one backend may send or hold, so a hostile one cannot exhaust the gateway."""

    # The status line and headers of a response, all of them together (h11's default).
    max_head_bytes: int = Field(default=16 * 1024, ge=512)
    max_header_count: int = Field(default=128, ge=8)
    # A non-streamed response body: 128k tokens of one choice with top-5 logprobs fit.
    max_body_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    # One server-sent event, i.e. the bytes a stream may send without a blank line.
    max_sse_event_bytes: int = Field(default=1024 * 1024, ge=1024)
    # A whole stream: an endless one would grow the call's record (token times, logprobs).
    max_stream_bytes: int = Field(default=256 * 1024 * 1024, ge=1024)
    # Open connections per backend; further calls wait for one, up to `pool_wait_timeout_s`.
    max_connections: int = Field(default=512, ge=1)
    pool_wait_timeout_s: float = Field(default=10.0, gt=0)
    # Below uvicorn's 5 s keep-alive (vLLM's server), so the gateway closes idle ones first.
    idle_expiry_s: float = Field(default=4.0, gt=0)
    # A stream whose client stopped reading is abandoned (and its backend freed) after this.
    stalled_client_timeout_s: float = Field(default=60.0, gt=0)


class KeyLookupLimits(_Strict):
    """Bounds on verifying presented keys, so random well-formed keys cannot crowd out real ones."""

    # Verdicts held in memory: granted keys and unknown ones apart, so unknown keys never evict.
    max_granted_keys: int = Field(default=10_000, ge=1)
    max_unknown_keys: int = Field(default=10_000, ge=1)
    # Database lookups at once for keys not cached: for prefixes never granted here, and apart
    # for prefixes granted before (and background refreshes), so a flood waits only on itself.
    lookup_threads: int = Field(default=4, ge=1, le=64)
    # Lookups that may wait for a thread before more are refused with a 503.
    max_waiting_lookups: int = Field(default=64, ge=0)
    # Failed lookups one client address may cause per minute (burst the same) before a 429.
    failed_lookups_per_minute: int = Field(default=60, ge=1)
    max_tracked_clients: int = Field(default=10_000, ge=1)


class KeyLastUsed(_Strict):
    """How each key's last use reaches the database: in batches, never a write per call."""

    # Each process writes the uses it noted this often (one UPDATE per key used), and at exit.
    flush_s: float = Field(default=10.0, gt=0, le=3600)
    # Distinct keys held between flushes; uses of further keys wait for the next flush.
    max_keys: int = Field(default=100_000, ge=1)


class Limits(_Strict):
    """Guards on what a client may send and how long the gateway waits upstream."""

    max_body_bytes: int = 8 * 1024 * 1024
    # Inputs, documents or pairs in one embeddings, pooling, classify, score or rerank call.
    max_pooling_items: int = Field(default=2048, ge=1)
    # Per-key and per-team request and token limits: where they are kept (docs/security.md).
    rate_limits: RateLimitConfig = Field(default_factory=RateLimitConfig)
    # Spend budgets per team and key (docs/security.md): kept where the rate limits are.
    budgets: BudgetConfig = Field(default_factory=BudgetConfig)
    # How long a verified key is trusted from memory: a revocation made elsewhere (CLI,
    # another replica) takes effect here within this time.
    key_cache_ttl_s: float = Field(default=30.0, ge=0, le=3600)
    key_lookups: KeyLookupLimits = Field(default_factory=KeyLookupLimits)
    key_last_used: KeyLastUsed = Field(default_factory=KeyLastUsed)
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 120.0
    body_read_timeout_s: float = 30.0
    # SIGTERM: calls in flight get this long to finish before they are cut and recorded.
    drain_timeout_s: int = Field(default=30, ge=0, le=3600)
    # An idle client connection is closed after this long. It outlasts what clients keep one
    # for (openai SDK / httpx 5 s, aiohttp 15 s, balancers 60 s), so the client closes first:
    # at uvicorn's 5 s a busy client sent calls on connections being closed ("Server
    # disconnected", no answer).
    keep_alive_s: int = Field(default=75, ge=1, le=3600)
    backends: BackendLimits = Field(default_factory=BackendLimits)

    @model_validator(mode="before")
    @classmethod
    def _replicas_are_gone(cls, data: object) -> object:
        # Refused rather than ignored: ignored, each replica would enforce the whole limit.
        if isinstance(data, dict) and "rate_limit_replicas" in data:
            raise ValueError(
                "limits.rate_limit_replicas is gone: replicas no longer divide the limits "
                "between them. For several gateway processes or replicas set "
                "limits.rate_limits.store: redis (PLUMBLINE_REDIS__URL), which keeps one "
                "limit for all of them; for one process remove the setting."
            )
        return data


class RedactionConfig(_Strict):
    """What the log sink's writer removes from bodies and logprobs before storing them."""

    enabled: bool = True
    emails: bool = True
    api_keys: bool = True
    card_numbers: bool = True
    # Regular expressions of further things to redact (keep repetition bounded: {1,64}).
    extra_patterns: list[str] = Field(default_factory=list)
    # Mask secrets in stored logprob tokens too (they spell out the generated text).
    logprobs: bool = True
    # Stored bodies are cut to this size first, which also bounds the redaction's work.
    max_stored_body_bytes: int = Field(default=1 << 20, ge=1024)

    @field_validator("extra_patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"extra pattern {pattern!r} is not a regex: {error}") from None
        return patterns


class LogprobVocabConfig(_Strict):
    """Bounds of the v3 logprob vocabulary (the `logprob_vocab` table and each recorder's cache).

    A record past any of them is stored in the v2 form instead, counted by reason in
    `plumbline_logprob_v3_fallbacks`; nothing is lost.
    """

    # Longest key (a token's JSON string and its `bytes` JSON, as sent) given an id.
    max_key_bytes: int = Field(default=256, ge=16, le=1024)
    # Ids given out in all (the table grows only: rows refer to them as long as they are kept).
    max_rows: int = Field(default=2_000_000, ge=1)
    # Keys one record may add, and (8x this) keys unknown to the recorder it may look up: the
    # database work one record costs is bounded by these.
    max_new_keys_per_record: int = Field(default=4096, ge=1)
    # Keys each recorder keeps in memory (about 135 bytes each: 35 MB at the default); when
    # full the cache starts again from empty and refills from the table.
    cache_keys: int = Field(default=262_144, ge=1)


class RecordingConfig(_Strict):
    """How the log sink batches and where it spools when the database is away."""

    # Build and write call rows in threads of the gateway's own process rather than in a
    # recorder process beside it: one process less, but the rows' CPU then competes with the
    # proxy for the GIL (see docs/benchmarks.md, Overhead).
    in_process: bool = False
    # Added to the recorder process's niceness (as `nice -n`) at its start: recording is
    # asynchronous, so under CPU contention the proxy and a vLLM on the same host go first,
    # and the recorder catches up when the CPU is free. 10 leaves it about a tenth of a
    # contended core against a nice-0 process (docs/operations.md); 0 runs it as the gateway.
    recorder_nice: int = Field(default=10, ge=0, le=19)
    # False: the recorder process's Postgres transactions commit without waiting for their WAL
    # to reach the disk (`synchronous_commit = off`, its own sessions only). About 0.4 ms of
    # recorder CPU and 0.3 ms of Postgres CPU less a batch, but the calls of the last ~0.6 s
    # before a Postgres or host crash are lost: their spool file is already gone.
    synchronous_commit: bool = True
    queue_capacity: int = 100_000
    batch_size: int = 1000
    flush_interval_ms: float = 50.0
    spool_dir: Path = Path("var/spool")
    # Bytes of spooled batches kept while the database is away; beyond this calls are dropped
    # (counted and logged) rather than filling the disk the gateway's host needs.
    spool_max_bytes: int = Field(default=20 * 2**30, ge=2**20)
    redaction: RedactionConfig = Field(default_factory=RedactionConfig)
    # Retention class of calls no team can be charged with (bad or missing keys).
    unattributed_retention_days: int = 30
    # How logprobs are stored: v1 the backend's JSON; v2 columns, about a third of the bytes,
    # top-k kept apart (a team's topk_retention_days needs it); v3 (chat; completions stay v2)
    # token ids from the `logprob_vocab` table, about a sixth. Every release reads v1 and v2,
    # this one v3 too; turn a form on once no replica runs a release that cannot read it.
    logprob_form: Literal["v1", "v2", "v3"] = "v1"
    logprob_vocab: LogprobVocabConfig = Field(default_factory=LogprobVocabConfig)

    @field_validator("unattributed_retention_days")
    @classmethod
    def _is_class(cls, days: int) -> int:
        check_retention_days(days)
        return days


class HealthConfig(_Strict):
    """How often backends are probed and scraped."""

    interval_s: float = 5.0
    timeout_s: float = 2.0
    timeouts_to_mark_down: int = Field(default=3, ge=1)
    # /metrics and /v1/models pages over this size are dropped unread (vLLM's are ~100 KiB).
    max_page_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)


class FeatureSampling(_Strict):
    """How a feature's production calls are picked for resampling, and how answers compare."""

    rate: float = Field(default=0.01, ge=0, le=1)
    # Only calls the client marks `X-Plumbline-Stakes: high` are candidates.
    high_stakes_only: bool = False
    # How answers are parsed before comparing; default: SQuAD-normalised text.
    answer: AnswerSpec | None = None


class LiveSamplingConfig(_Strict):
    """Stability of live traffic: which calls a worker re-asks, and how many times."""

    features: dict[str, FeatureSampling] = Field(default_factory=dict)
    # The rule for product features not listed above (None: they are never sampled).
    default: FeatureSampling | None = None
    resamples: int = Field(default=5, ge=1, le=50)


class GatewayConfig(_Strict):
    """Everything the gateway needs besides process settings."""

    # A refused value may be a URL with a password in it: errors name the field, not the value.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)
    models: list[ModelConfig]
    features: list[str] = Field(default_factory=list)
    limits: Limits = Field(default_factory=Limits)
    recording: RecordingConfig = Field(default_factory=RecordingConfig)
    health: HealthConfig = Field(default_factory=HealthConfig)
    live_sampling: LiveSamplingConfig = Field(default_factory=LiveSamplingConfig)
    # How long /metrics reuses the eval and live-stability figures it read from the database.
    stability_metrics_ttl_s: float = Field(default=15.0, ge=0)

    @model_validator(mode="after")
    def _unique_names(self) -> GatewayConfig:
        names = [m.name for m in self.models]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"model names must be unique; repeated: {', '.join(duplicates)}")
        return self

    @cached_property
    def model_names(self) -> tuple[str, ...]:
        """The names clients use, in order: one tuple, so model access memoises against it."""
        return tuple(m.name for m in self.models)

    def model(self, name: str) -> ModelConfig | None:
        """The config of a model by the name clients use."""
        for model in self.models:
            if model.name == name:
                return model
        return None


def load_gateway_config(path: Path) -> GatewayConfig:
    """Read and validate a gateway YAML file."""
    data = yaml.safe_load(path.read_text())
    return GatewayConfig.model_validate(data)
