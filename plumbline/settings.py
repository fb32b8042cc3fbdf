"""Process-wide settings read from the environment (prefix PLUMBLINE_, nested with __)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class DatabaseSettings(BaseModel):
    """Where calls, evals and alerts are stored."""

    url: str = "sqlite:///plumbline.db"
    pool_size: int = 5
    echo: bool = False


class RedisSettings(BaseModel):
    """Celery broker and cross-worker limits."""

    url: str = "redis://127.0.0.1:6379/0"


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


class Settings(BaseSettings):
    """All settings of a Plumbline process."""

    model_config = SettingsConfigDict(
        env_prefix="PLUMBLINE_", env_nested_delimiter="__", extra="ignore"
    )

    environment: str = "development"
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    data_dir: Path = Path("var")
    key_salt: SecretStr = SecretStr("plumbline-development-salt")
    embedded: bool = False
    eval: EvalSettings = Field(default_factory=EvalSettings)
