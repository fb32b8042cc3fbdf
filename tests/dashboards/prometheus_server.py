"""promtool and a real Prometheus server (Debian's build, from `make prometheus-tools`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from plumbline.child_process import ServerProcess, free_port
from tests.dashboards.dashboard_files import RULE_FILES


def prometheus_tool(name: str) -> str:
    """Path of `promtool` or `prometheus`: on PATH, else where scripts/prometheus-tools put it."""
    cache = Path(os.environ.get("PLUMBLINE_CACHE", Path.home() / ".cache" / "plumbline"))
    found = shutil.which(name) or shutil.which(name, path=str(cache / "prometheus/usr/bin"))
    if found is None:
        pytest.fail(f"{name} not found; `make prometheus-tools` installs it under {cache}")
    return found


class PrometheusServer(ServerProcess):
    """Prometheus scraping one gateway every second and evaluating Plumbline's rule files."""

    def __init__(self, gateway_host_port: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workdir = workdir = Path(tempfile.mkdtemp(prefix="plumbline-prom-"))
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(path) for path in RULE_FILES],
            "scrape_configs": [
                {
                    "job_name": "plumbline-gateway",
                    "static_configs": [{"targets": [gateway_host_port]}],
                }
            ],
        }
        (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
        super().__init__(
            [
                prometheus_tool("prometheus"),
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            f"{self.url}/-/ready",
        )

    def stop(self, timeout: float = 15.0) -> int | None:
        """Stop the server and remove its config and data."""
        code = super().stop(timeout)
        shutil.rmtree(self.workdir, ignore_errors=True)
        return code

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's result; a query Prometheus rejects fails the test with its error."""
        body = httpx.get(f"{self.url}/api/v1/query", params={"query": expr}).json()
        assert body["status"] == "success", f"{expr}: {body.get('error')}"
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def api(self, path: str, **params: str) -> Any:
        """GET /api/v1/<path> and return its data."""
        body = httpx.get(f"{self.url}/api/v1/{path}", params=params).json()
        assert body["status"] == "success", body
        return body["data"]
