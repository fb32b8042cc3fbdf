"""Arize Phoenix, the real OTLP tracing backend, on loopback: started, read back through its API."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from plumbline.child_process import ServerProcess, free_port
from tests.support.waiting import wait_for

PHOENIX_VERSION = "20.26.1"
# Spans with no `openinference.project.name` resource attribute land in this project.
DEFAULT_PROJECT = "default"
SPANS_PAGE_LIMIT = 1000


def phoenix_venv() -> Path:
    """The venv `make phoenix-env` (scripts/phoenix-env) builds."""
    cache = Path(os.environ.get("PLUMBLINE_CACHE") or Path.home() / ".cache" / "plumbline")
    return Path(os.environ.get("PLUMBLINE_PHOENIX_VENV") or cache / f"phoenix-{PHOENIX_VERSION}")


@dataclass(frozen=True)
class StoredSpan:
    """One span as Phoenix stored it; ids are lowercase hex, as on the wire in `traceparent`."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    attributes: dict[str, Any]


class PhoenixProcess(ServerProcess):
    """`phoenix serve` on free loopback ports, offline, its SQLite database in a temp dir."""

    def __init__(self, startup_timeout: float = 120.0) -> None:
        venv = phoenix_venv()
        if not (venv / ".plumbline-ready").exists():
            raise RuntimeError(f"no Phoenix venv at {venv}: run `make phoenix-env`")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # Phoenix takes OTLP/HTTP protobuf on its one HTTP port.
        self.otlp_traces_url = f"{self.url}/v1/traces"
        self.workdir = Path(tempfile.mkdtemp(prefix="plumbline-phoenix-"))
        env = {
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            # Its gRPC collector cannot be turned off: give it a free port, not everyone's 4317.
            "PHOENIX_GRPC_PORT": str(free_port()),
            "PHOENIX_WORKING_DIR": str(self.workdir),
            # Offline: no usage telemetry, no fonts or scripts from the internet.
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
            "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
            "DO_NOT_TRACK": "1",
        }
        super().__init__(
            [str(venv / "bin" / "phoenix"), "serve"],
            f"{self.url}/healthz",
            env=env,
            startup_timeout=startup_timeout,
        )

    def stop(self, timeout: float = 15.0) -> int | None:
        """Stop the server, then remove its database."""
        try:
            return super().stop(timeout)
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def spans(self, trace_id: str, project: str = DEFAULT_PROJECT) -> list[StoredSpan]:
        """Every span of trace `trace_id` Phoenix holds for `project`, read through its REST API."""
        found: list[StoredSpan] = []
        params: dict[str, str | int] = {"limit": SPANS_PAGE_LIMIT, "trace_id": trace_id}
        with httpx.Client(base_url=self.url, timeout=30) as http:
            while True:
                reply = http.get(f"/v1/projects/{project}/spans", params=params)
                if reply.status_code == 404:
                    return found  # the project appears with its first span
                reply.raise_for_status()
                page = reply.json()
                found += [_stored_span(raw) for raw in page["data"]]
                if not page.get("next_cursor"):
                    return found
                params["cursor"] = page["next_cursor"]

    def wait_for_span(
        self, name: str, trace_id: str, project: str = DEFAULT_PROJECT, timeout: float = 60.0
    ) -> StoredSpan:
        """Span `name` of trace `trace_id`, once Phoenix has stored it (it inserts in batches)."""

        def probe() -> StoredSpan | None:
            matches = [s for s in self.spans(trace_id, project) if s.name == name]
            return matches[0] if matches else None

        return wait_for(
            probe, timeout=timeout, what=f"span {name!r} of trace {trace_id} in Phoenix"
        )


@contextmanager
def running_phoenix() -> Iterator[PhoenixProcess]:
    """A started Phoenix, stopped (and its database removed) on leaving."""
    server = PhoenixProcess()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _stored_span(raw: dict[str, Any]) -> StoredSpan:
    context = raw["context"]
    return StoredSpan(
        trace_id=context["trace_id"],
        span_id=context["span_id"],
        parent_id=raw.get("parent_id") or None,
        name=raw["name"],
        attributes=dict(raw.get("attributes") or {}),
    )
