"""Start a real gateway (uvicorn, subprocess) on a test database, and issue keys for it."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy.orm import Session

from gateway.auth.service import create_key
from plumbline.child_process import ServerProcess, free_port, plumbline_command
from plumbline.db import create_db_engine, make_session_factory
from plumbline.repositories.teams import team_by_name

TEST_PEPPER = "plumbline-test-pepper"


def gateway_config(backend_url: str, **overrides: Any) -> dict[str, Any]:
    """A one-model config pointing at `backend_url`, with fast health checks."""
    model: dict[str, Any] = {
        "name": "tiny",
        "backends": [{"url": backend_url}],
        "price": {"input_per_million": 0.5, "output_per_million": 1.5},
        "parameters": 8e9,
        "weight_bytes": 16e9,
        "memory_bandwidth": 3.35e12,
    }
    config: dict[str, Any] = {
        "models": [model],
        "features": ["chat", "search"],
        "health": {"interval_s": 0.5, "timeout_s": 1.0},
        "recording": {"flush_interval_ms": 20},
    }
    config.update(overrides)
    return config


class GatewayProcess(ServerProcess):
    """`plumbline gateway` in a child process with its config written to a temp file."""

    def __init__(
        self,
        config: dict[str, Any],
        database_url: str,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        workdir = Path(tempfile.mkdtemp(prefix="plumbline-gw-"))
        self.spool_dir = workdir / "spool"
        config = {**config}
        config.setdefault("recording", {})
        config["recording"] = {**config["recording"], "spool_dir": str(self.spool_dir)}
        self.config_path = workdir / "gateway.yaml"
        self.config_path.write_text(yaml.safe_dump(config))
        super().__init__(
            plumbline_command(
                "gateway", "--config", str(self.config_path), "--port", str(self.port), *args
            ),
            f"{self.url}/health",
            env={
                "PLUMBLINE_DATABASE__URL": database_url,
                "PLUMBLINE_KEY_SALT": TEST_PEPPER,
                # Eval runs started through the API call this address, never the Host header.
                "PLUMBLINE_EVAL__GATEWAY_URL": self.url,
                # Without workers beside it, a test gateway executes API-started runs itself,
                # as the demo's does; tests/workers/test_api_runs.py queues them instead.
                "PLUMBLINE_EMBEDDED": "true",
                **(env or {}),
            },
        )


def issue_key(
    database_url: str, team: str, *, admin: bool = False, store_bodies: bool = False
) -> str:
    """Create a key (and its team) directly in the database, as `plumbline keys create` does."""
    engine = create_db_engine(database_url)
    try:
        with make_session_factory(engine)() as session, session.begin():
            issued = create_key(session, team, TEST_PEPPER, admin=admin)
            _set_store_bodies(session, team, store_bodies)
    finally:
        engine.dispose()
    return issued.plaintext


def _set_store_bodies(session: Session, team: str, store_bodies: bool) -> None:
    row = team_by_name(session, team)
    assert row is not None
    row.store_bodies = store_bodies
