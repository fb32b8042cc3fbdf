"""Process-wide settings read from the environment (prefix PLUMBLINE_, nested with __)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class DatabaseSettings(BaseModel):
    """Where calls, evals and alerts are stored."""

    url: str = "sqlite:///plumbline.db"
    pool_size: int = 5
    echo: bool = False


class RedisSettings(BaseModel):
    """Celery broker and cross-worker limits."""

    url: str = "redis://127.0.0.1:6379/0"


class KeyInvalidationSettings(BaseModel):
    """How a key or team change made anywhere reaches every gateway process's key cache."""

    # none: one gateway process; its admin API clears its own cache, and a change made elsewhere
    # (CLI) is seen within limits.key_cache_ttl_s (and STALE_S while the database is slow).
    # redis: every change is published on Redis (PLUMBLINE_REDIS__URL) after it commits, and
    # every gateway process drops it on hearing it. Set it alike on gateways and the CLI.
    channel: Literal["none", "redis"] = "none"
    # While the channel is not confirmed live, a cached key is trusted this long after it was
    # verified, then looked up again (never served stale). Also how long Redis may be silent
    # on the subscription before it counts as down.
    unconfirmed_ttl_s: float = Field(default=1.0, gt=0, le=60)
    # A PING on the subscription this often (keep well under unconfirmed_ttl_s).
    heartbeat_s: float = Field(default=0.25, gt=0, le=30)

    @model_validator(mode="after")
    def _heartbeat_within_bound(self) -> KeyInvalidationSettings:
        if self.heartbeat_s >= self.unconfirmed_ttl_s:
            raise ValueError("key_invalidation.heartbeat_s must be below unconfirmed_ttl_s")
        return self


class EvalSettings(BaseModel):
    """How eval runs reach the gateway, and how hard they may push the backends."""

    # None: the CLI uses http://127.0.0.1:8080; runs started through the API call their gateway.
    gateway_url: str | None = None
    # An admin key, so samples are attributed to each suite's team (X-Plumbline-Team).
    api_key: SecretStr | None = None
    concurrency: int = Field(default=8, ge=1, description="Samples in flight per suite")
    backend_concurrency: int = Field(
        default=16, ge=1, description="Eval samples in flight per model's backends, all suites"
    )
    request_timeout_s: float = Field(default=300.0, gt=0)
    max_attempts: int = Field(default=3, ge=1)
    logprob_wait_s: float = Field(default=15.0, ge=0)
    paraphrase_model: str | None = None


ChannelKind = Literal["webhook", "slack", "alertmanager"]


class ChannelSettings(BaseModel):
    """One notification channel: where alerts are delivered and in which shape."""

    kind: ChannelKind
    url: str
    headers: dict[str, str] = Field(default_factory=dict)


class SuiteChannelSettings(BaseModel):
    """Channels written inside a suite: URLs a team supplied, so checked before each connection."""

    # Hosts (exact names or IP literals) a team key may name in a suite's inline channel; they
    # are trusted as the operator's choice and may resolve to internal addresses. Any other
    # inline channel needs an admin key at import and never reaches an internal address.
    allowed_hosts: list[str] = Field(default_factory=list)


class NotifySettings(BaseModel):
    """Alert notification channels (named, shared) and how deliveries are retried."""

    # Suites name these under `alert.notify`; suites that name none use `default_channels`.
    channels: dict[str, ChannelSettings] = Field(default_factory=dict)
    default_channels: list[str] = Field(default_factory=list)
    max_attempts: int = Field(default=6, ge=1, le=50)
    backoff_s: float = Field(default=2.0, gt=0)
    max_backoff_s: float = Field(default=300.0, gt=0)
    timeout_s: float = Field(default=10.0, gt=0)
    # A firing alert sent to Alertmanager expires after this long unless resolved or re-sent.
    alertmanager_hold_s: float = Field(default=7 * 24 * 3600.0, gt=0)
    # Base URL of the gateway's read API, for links in messages.
    public_url: str | None = None
    suite_channels: SuiteChannelSettings = Field(default_factory=SuiteChannelSettings)


class WorkerSettings(BaseModel):
    """Celery workers and beat: broker, fan-out, leases, sweeps, schedules, live resampling."""

    # None: the Redis URL above; `memory://` runs the in-process embedded worker.
    broker_url: str | None = None
    # Prefix of every broker and limit key, so several deployments (or tests) share one Redis.
    key_prefix: str = "plumbline:"
    # How long the gateway's API waits to hand a run to the broker before answering 503.
    publish_timeout_s: float = Field(default=3.0, gt=0, le=60)
    batch_size: int = Field(default=50, ge=1, le=5000, description="Samples per batch task")
    # A sample claim not renewed for this long (workers renew every third of it) is taken to
    # belong to a dead worker.
    sample_lease_s: float = Field(default=90.0, gt=0)
    # A cross-worker concurrency slot expires unless renewed (every third of this).
    slot_lease_s: float = Field(default=60.0, gt=0)
    finalize_lease_s: float = Field(default=900.0, gt=0)
    # A run without any sample claimed or finished for this long is re-enqueued by the sweeper.
    stall_after_s: float = Field(default=180.0, gt=0)
    sweep_interval_s: float = Field(default=30.0, gt=0)
    schedule_tick_s: float = Field(default=5.0, gt=0)
    # A cron slot older than this when beat first sees it is skipped, not run late.
    schedule_grace_s: float = Field(default=300.0, gt=0)
    # Unacknowledged broker messages come back after this long (Redis visibility_timeout).
    visibility_timeout_s: float = Field(default=3600.0, gt=0)
    unacked_restore_interval_s: float = Field(default=10.0, gt=0)
    live_dispatch_interval_s: float = Field(default=5.0, gt=0)
    live_batch: int = Field(default=100, ge=1, le=10_000)
    resample_concurrency: int = Field(default=2, ge=1, description="Resample calls per model")
    # vLLM `priority` of resample calls (larger = later), sent only to priority-scheduled models.
    resample_priority: int = 10
    # How often beat runs the retention job (drops expired call partitions, audited).
    retention_interval_s: float = Field(default=3600.0, gt=0)
    # How often beat rolls up finished hours of calls for the usage endpoint (Postgres only).
    usage_rollup_interval_s: float = Field(default=60.0, gt=0)
    notify: NotifySettings = Field(default_factory=NotifySettings)


class Settings(BaseSettings):
    """All settings of a Plumbline process."""

    model_config = SettingsConfigDict(
        env_prefix="PLUMBLINE_", env_nested_delimiter="__", extra="ignore"
    )

    environment: str = "development"
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    key_invalidation: KeyInvalidationSettings = Field(default_factory=KeyInvalidationSettings)
    data_dir: Path = Path("var")
    key_salt: SecretStr = SecretStr("plumbline-development-salt")
    # The demo's single-machine mode: API-started eval runs execute in the gateway process
    # (its worker's broker is in-memory, out of the gateway's reach); otherwise they are queued.
    embedded: bool = False
    eval: EvalSettings = Field(default_factory=EvalSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
