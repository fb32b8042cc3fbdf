"""DemoStack: simulator, migrated SQLite database and gateway, started together and stopped."""

from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from apps.demo.scenarios import DEMO_SIMULATOR
from apps.demo.webhook_inbox import WebhookInbox
from gateway.auth.service import create_key
from plumbline.child_process import ServerProcess, free_port, plumbline_command
from plumbline.db import create_db_engine, make_session_factory
from plumbline.migrate import upgrade_to_head
from plumbline.settings_env import settings_environment
from simulator.process import SimulatorProcess

DEMO_PEPPER = "plumbline-demo-only"


class DemoStack:
    """Everything the demo runs, under `directory`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.database_url = f"sqlite:///{directory / 'plumbline.db'}"
        self.gateway_port = free_port()
        self.gateway_url = f"http://127.0.0.1:{self.gateway_port}"
        self._stack = ExitStack()
        self.simulator: SimulatorProcess | None = None
        self.gateway: ServerProcess | None = None
        self.worker: ServerProcess | None = None
        self.inbox = WebhookInbox()
        self.admin_key = ""

    @property
    def env(self) -> dict[str, str]:
        """Environment every demo process shares."""
        settings = {
            "database": {"url": self.database_url},
            "key_salt": DEMO_PEPPER,
            # The worker's broker is in its own memory: the gateway runs API-started runs itself.
            "embedded": True,
            "eval": {"gateway_url": self.gateway_url, "api_key": self.admin_key},
            "worker": {
                "schedule_tick_s": 1,
                "sweep_interval_s": 5,
                "live_dispatch_interval_s": 1,
                "batch_size": 20,
                "notify": {
                    "channels": {"demo-webhook": {"kind": "webhook", "url": self.inbox.url}},
                    "public_url": self.gateway_url,
                },
            },
        }
        return {**settings_environment(settings), "PLUMBLINE_LOG_LEVEL": "WARNING"}

    def start(self) -> DemoStack:
        """Start the webhook inbox, simulator, gateway and worker on a fresh database."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for leftover in self.directory.glob("plumbline.db*"):
            leftover.unlink()
        upgrade_to_head(self.database_url)
        self.admin_key = self.issue_key("platform", admin=True)
        self._stack.enter_context(self.inbox)
        self.simulator = self._stack.enter_context(SimulatorProcess(DEMO_SIMULATOR))
        config_path = self.directory / "gateway.yaml"
        config_path.write_text(yaml.safe_dump(self.gateway_config()))
        self.gateway = ServerProcess(
            plumbline_command(
                "gateway", "--config", str(config_path), "--port", str(self.gateway_port)
            ),
            f"{self.gateway_url}/health",
            env={**os.environ, **self.env},
        )
        self._stack.enter_context(self.gateway)
        self.worker = ServerProcess(
            plumbline_command("worker", "--embedded", "--concurrency", "2"),
            ready_line=" ready.",
            env={**os.environ, **self.env},
            startup_timeout=60,
        )
        self._stack.enter_context(self.worker)
        return self

    def gateway_config(self) -> dict[str, Any]:
        """One model, served by the simulator, priced like a hosted 8B model."""
        assert self.simulator is not None
        return {
            "models": [
                {
                    "name": "contracts-llm",
                    "backends": [{"url": self.simulator.base_url}],
                    "price": {"input_per_million": 0.10, "output_per_million": 0.40},
                    "parameters": 8.0e9,
                    "weight_bytes": 16.0e9,
                    "memory_bandwidth": 3.35e12,
                }
            ],
            "features": ["contracts", "support", "search"],
            # A quarter of the contracts answers are re-asked 5 times by the worker.
            "live_sampling": {"features": {"contracts": {"rate": 0.25}}, "resamples": 5},
            "recording": {"spool_dir": str(self.directory / "spool"), "flush_interval_ms": 20},
        }

    def issue_key(self, team: str, *, admin: bool = False) -> str:
        """A key for a team of the demo database."""
        engine = create_db_engine(self.database_url)
        try:
            with make_session_factory(engine)() as session, session.begin():
                return create_key(session, team, DEMO_PEPPER, admin=admin).plaintext
        finally:
            engine.dispose()

    def stop(self) -> None:
        """Stop every process the demo started."""
        self._stack.close()

    def __enter__(self) -> DemoStack:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
