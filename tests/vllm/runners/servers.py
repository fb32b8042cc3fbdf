"""Real vLLM servers of other kinds than the session's: one per module, started and stopped here.

These modules sort before tests/vllm/test_*.py, so in a full run each of their servers has come
and gone before the session's server starts: on 2 cores two servers never run together. Run on
their own after the session server started, they fail rather than start a second server (a
skip would hide them in a run that orders tests otherwise).
"""

from __future__ import annotations

import atexit
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.vllm.conftest import LAUNCHER, LOG_KEY, StopLauncher, await_ready


def launched_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, *flags: str
) -> Iterator[httpx.Client]:
    """Start scripts/vllm-server with `flags`; yield a client for it; stop it afterwards."""
    if LOG_KEY in request.config.stash:
        pytest.fail(
            "the session's vLLM server is already running: run tests/vllm/runners first (a full "
            "run or `pytest tests/vllm` orders them first) or on their own"
        )
    log = tmp_path_factory.mktemp("vllm-runner") / "server.log"
    proc = subprocess.Popen(
        [sys.executable, str(LAUNCHER), "--log", str(log), *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stop = StopLauncher(proc)
    atexit.register(stop)
    try:
        with httpx.Client(base_url=await_ready(proc, stop), timeout=120) as client:
            yield client
    finally:
        stop()
