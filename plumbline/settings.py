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
