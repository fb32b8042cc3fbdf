"""`SimulatorProcess`: the simulator as a real subprocess on loopback, for tests and benchmarks."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from simulator.config import FaultConfig, Scenario, SimulatorConfig, TimingConfig

_Config = SimulatorConfig | dict[str, Any] | None


def _as_config(config: _Config) -> SimulatorConfig:
    if config is None:
        return SimulatorConfig()
    if isinstance(config, SimulatorConfig):
        return config
    return SimulatorConfig.model_validate(config)


class SimulatorProcess:
    """Start `python -m simulator` (or `plumbline simulator`) on 127.0.0.1; always stop it.

    `extra_args` are appended to the command line (e.g. `["--decode-ms-per-token", "2"]`).

    By default the listening socket is bound here and handed to the child, so the port is
    known before the child starts and cannot be taken by anyone else in between.
    """

    def __init__(
        self,
        config: _Config = None,
        *,
        use_cli: bool = False,
        startup_timeout: float = 30.0,
        env: dict[str, str] | None = None,
        extra_args: list[str] | None = None,
    ) -> None:
        self.config = _as_config(config)
        self.extra_args = list(extra_args or [])
        self.use_cli = use_cli
        self.startup_timeout = startup_timeout
        self.env = env
        self.port = 0
        self._dir: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._client: httpx.Client | None = None

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>` (append `/v1` for OpenAI clients)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        """Process id of the running simulator."""
        if self._proc is None:
            raise RuntimeError("the simulator is not running")
        return self._proc.pid

    @property
    def log_path(self) -> Path:
        """Where the child's stdout and stderr go."""
        if self._dir is None:
            raise RuntimeError("the simulator is not running")
        return Path(self._dir) / "simulator.log"

    def __enter__(self) -> SimulatorProcess:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Spawn the child and wait until /health answers."""
        self._dir = tempfile.mkdtemp(prefix="plumbline-sim-")
        config_path = Path(self._dir) / "simulator.yaml"
        config_path.write_text(self.config.to_yaml(), encoding="utf-8")
        env = {**os.environ, **(self.env or {})}
        log = open(self.log_path, "wb")
        try:
            if self.use_cli:
                self.port = _free_port()
                command = [*_plumbline_command(), "simulator", "--config", str(config_path)]
                command += ["--port", str(self.port), *self.extra_args]
                self._proc = subprocess.Popen(command, stdout=log, stderr=log, env=env)
            else:
                listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind(("127.0.0.1", 0))
                listener.listen(4096)
                self.port = listener.getsockname()[1]
                fd = listener.fileno()
                command = [sys.executable, "-m", "simulator", "--config", str(config_path)]
                command += ["--fd", str(fd), *self.extra_args]
                try:
                    self._proc = subprocess.Popen(
                        command, stdout=log, stderr=log, env=env, pass_fds=(fd,)
                    )
                finally:
                    listener.close()
        finally:
            log.close()
        self._client = httpx.Client(base_url=self.base_url, timeout=30.0)
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                break
            try:
                if self.client.get("/health", timeout=1.0).status_code in (200, 503):
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        log = self.log_path.read_text(errors="replace")[-4000:]
        self.stop()
        raise RuntimeError(f"simulator did not become healthy:\n{log}")

    def stop(self) -> None:
        """Terminate the child (SIGTERM, then SIGKILL) and remove its files."""
        if self._client is not None:
            self._client.close()
            self._client = None
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    @property
    def client(self) -> httpx.Client:
        """An httpx client bound to the simulator's base URL."""
        if self._client is None:
            raise RuntimeError("the simulator is not running")
        return self._client

    def _post(self, path: str, body: Any) -> Any:
        response = self.client.post(path, json=body)
        response.raise_for_status()
        return response.json()

    def set_scenarios(self, scenarios: list[Scenario] | list[dict[str, Any]]) -> Any:
        """Replace the scripted scenarios."""
        items = [s.model_dump(mode="json") if isinstance(s, Scenario) else s for s in scenarios]
        return self._post("/_sim/scenarios", {"scenarios": items})

    def set_faults(self, faults: FaultConfig | dict[str, Any]) -> Any:
        """Replace the fault settings (omitted faults are off)."""
        body = faults.model_dump(mode="json") if isinstance(faults, FaultConfig) else faults
        return self._post("/_sim/faults", body)

    def set_timing(self, timing: TimingConfig | dict[str, Any]) -> Any:
        """Replace the timing model."""
        body = timing.model_dump(mode="json") if isinstance(timing, TimingConfig) else timing
        return self._post("/_sim/timing", body)

    def stats(self) -> Any:
        """GET /_sim/stats."""
        response = self.client.get("/_sim/stats")
        response.raise_for_status()
        return response.json()

    def timeline(self, response_id: str) -> Any:
        """GET /_sim/requests/{id}: wall-clock times of the response's token writes."""
        response = self.client.get(f"/_sim/requests/{response_id}")
        response.raise_for_status()
        return response.json()

    def reset(self) -> Any:
        """Zero the stats and empty the prefix cache."""
        return self._post("/_sim/reset", {})

    def metrics_text(self) -> str:
        """GET /metrics."""
        return self.client.get("/metrics").text


def _plumbline_command() -> list[str]:
    # A command line, not an import: the simulator imports nothing of Plumbline.
    return [sys.executable, "-m", "apps.cli"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
