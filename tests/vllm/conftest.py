"""Fixtures for tests against a real vLLM (CPU build) serving the tiny random-weight model.

One server per session, started by scripts/vllm-server and stopped by a finalizer, by atexit, or
(if this process is killed) by the launcher noticing its stdin close. Tests here carry the
`xdist_group("vllm")` mark, so under `--dist loadgroup` one worker owns the one server.

Gateway tests get one real `plumbline gateway` per module, on its own Postgres database, with
that server as the backend of model `tiny`.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "scripts" / "vllm-server"
EXIT_NO_VENV = 3
LOG_KEY = pytest.StashKey[Path]()
UNGROUPED_KEY = pytest.StashKey[list[str]]()
LOG_TAIL_LINES = 60


class StopLauncher:
    """Stop the launcher (and so the server) once, whoever asks first: finalizer or atexit."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.pgid: int | None = None
        self.done = False

    def __call__(self) -> None:
        if self.done:
            return
        self.done = True
        # Closing stdin asks the launcher to stop the server; killing the group is the fallback.
        if self.proc.stdin and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signal.SIGKILL)


def _read_log_tail(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no vLLM log at {log})"
    return "\n".join(lines[-LOG_TAIL_LINES:])


@pytest.fixture(scope="session")
def vllm_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """Start the real vLLM server once per session and yield its base URL (no /v1).

    With $PLUMBLINE_VLLM_URL set (as `scripts/vllm-server -- pytest tests/vllm` sets it), use that
    server instead of starting one.
    """
    if os.environ.get("PLUMBLINE_VLLM_URL"):
        yield os.environ["PLUMBLINE_VLLM_URL"]
        return
    if ungrouped := request.config.stash.get(UNGROUPED_KEY, []):
        pytest.fail(
            f"--dist loadgroup did not group {ungrouped[0]}, so every worker would start its own "
            "vLLM; this pytest / pytest-xdist pair is broken (pytest 9.2 with xdist 3.8).",
            pytrace=False,
        )
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    request.config.stash[LOG_KEY] = log
    proc = subprocess.Popen(
        [sys.executable, str(LAUNCHER), "--log", str(log)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stop_launcher = StopLauncher(proc)
    atexit.register(stop_launcher)
    try:
        yield await_ready(proc, stop_launcher)
    finally:
        stop_launcher()


def await_ready(proc: subprocess.Popen[str], stop_launcher: StopLauncher) -> str:
    """Read the launcher's `ready URL pgid=N log=FILE` line; fail the test with why if it fails."""
    assert proc.stdout is not None
    ready = proc.stdout.readline().split()
    if len(ready) >= 3 and ready[0] == "ready":
        stop_launcher.pgid = int(ready[2].removeprefix("pgid="))
        return ready[1]
    stop_launcher()
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode == EXIT_NO_VENV:
        pytest.fail(f"vLLM CPU venv is missing: run `make vllm-env`.\n{err}", pytrace=False)
    pytest.fail(f"vLLM server did not start (rc={proc.returncode}):\n{err}", pytrace=False)


@pytest.fixture
def client(vllm_server: str) -> Generator[openai.OpenAI, None, None]:
    """An official OpenAI SDK client pointed at the real vLLM server."""
    with openai.OpenAI(base_url=f"{vllm_server}/v1", api_key="unused", max_retries=0) as sdk:
        yield sdk


@pytest.fixture
def http(vllm_server: str) -> Generator[httpx.Client, None, None]:
    """A raw HTTP client, for what the SDK hides: headers, [DONE], malformed bodies."""
    with httpx.Client(base_url=vllm_server, timeout=60) as raw:
        yield raw


@pytest.fixture(scope="module")
def gateway_database() -> Iterator[str]:
    """A migrated Postgres database for this module's gateway."""
    with postgres_database("plumbline_vllm") as url:
        yield url


@pytest.fixture(scope="module")
def vllm_gateway(vllm_server: str, gateway_database: str) -> Iterator[GatewayProcess]:
    """A real gateway whose model `tiny` is served by the real vLLM."""
    gateway = GatewayProcess(gateway_config(vllm_server), gateway_database)
    with gateway:
        yield gateway


@pytest.fixture(scope="module")
def gateway_key(gateway_database: str) -> str:
    """An API key of team `vllm-tests`."""
    return issue_key(gateway_database, "vllm-tests")


@pytest.fixture
def gateway_client(
    vllm_gateway: GatewayProcess, gateway_key: str
) -> Generator[openai.OpenAI, None, None]:
    """The official OpenAI SDK pointed at the gateway."""
    base = f"{vllm_gateway.url}/v1"
    with openai.OpenAI(base_url=base, api_key=gateway_key, max_retries=0) as sdk:
        yield sdk


@pytest.fixture
def gateway_http(
    vllm_gateway: GatewayProcess, gateway_key: str
) -> Generator[httpx.Client, None, None]:
    """A raw HTTP client for the gateway, authenticated."""
    headers = {"Authorization": f"Bearer {gateway_key}"}
    with httpx.Client(base_url=vllm_gateway.url, headers=headers, timeout=60) as raw:
        yield raw


@pytest.fixture(scope="module")
def calls(gateway_database: str) -> Iterator[CallReader]:
    """Reads the calls the gateway recorded."""
    reader = CallReader(gateway_database)
    yield reader
    reader.close()


def parse_sse(text: str) -> list[Any]:
    """Split an event stream into its `data:` payloads: parsed JSON, or the string "[DONE]"."""
    events: list[Any] = []
    for block in text.split("\n\n"):
        if block.strip():
            assert block.startswith("data: "), f"not an SSE data event: {block!r}"
            payload = block.removeprefix("data: ")
            events.append(payload if payload == "[DONE]" else json.loads(payload))
    return events


PostSse = Callable[[str, dict[str, Any]], tuple[httpx.Response, list[Any]]]


@pytest.fixture
def post_sse(http: httpx.Client) -> PostSse:
    """POST a streaming request and return the response and its parsed events."""

    def post(path: str, body: dict[str, Any]) -> tuple[httpx.Response, list[Any]]:
        resp = http.post(path, json=body)
        assert resp.status_code == 200, resp.text
        return resp, parse_sse(resp.text)

    return post


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Note tests that `--dist loadgroup` failed to group (each worker would start a server)."""
    if getattr(config.option, "loadgroup", False):
        config.stash[UNGROUPED_KEY] = [
            item.nodeid
            for item in items
            if (mark := item.get_closest_marker("xdist_group"))
            and not item.nodeid.endswith(f"@{mark.args[0] if mark.args else 'default'}")
        ]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the tail of the vLLM log to the report of a failing test that used the server."""
    report = yield
    log = item.config.stash.get(LOG_KEY, None)
    if report.failed and log is not None and "vllm_server" in getattr(item, "fixturenames", ()):
        report.sections.append(("vLLM server log (tail)", _read_log_tail(log)))
    return report
