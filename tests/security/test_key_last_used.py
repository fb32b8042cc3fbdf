"""Each key's last use: held in memory, written in batches (never per call) and at shutdown."""

from __future__ import annotations

import math
import os
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg
import pytest

from plumbline.child_process import plumbline_command
from tests.security.scoped_keys import metric, scoped_key
from tests.security.stack import SecurityStack, security_stack
from tests.support.gateway_process import TEST_PEPPER
from tests.support.waiting import wait_for

pytestmark = pytest.mark.xdist_group("security-key-last-used")
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
WRITES = "plumbline_key_last_used_writes_total"
FLUSHES = "plumbline_key_last_used_flushes_total"
CALLS = 50


def _fifty_calls(stack: SecurityStack, key: str) -> tuple[datetime, float]:
    """When the calls began, and how long they took."""
    began, t0 = datetime.now(UTC), time.monotonic()
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=stack.url, headers=headers, timeout=30) as client:
        for _ in range(CALLS):
            assert client.post("/v1/chat/completions", json=CHAT).status_code == 200
    return began, time.monotonic() - t0


def _cli_listing(stack: SecurityStack, prefix: str) -> str:
    env = {
        **os.environ,
        "PLUMBLINE_DATABASE__URL": stack.database_url,
        "PLUMBLINE_KEY_SALT": TEST_PEPPER,
    }
    listed = subprocess.run(
        plumbline_command("keys", "list", "--team", "alpha"),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return next(line for line in listed.stdout.splitlines() if line.startswith(prefix))


def test_fifty_calls_write_nothing_until_the_flush_at_shutdown(tmp_path: Path) -> None:
    config = {"limits": {"key_last_used": {"flush_s": 3600}}}
    with security_stack("postgres", tmp_path, config=config) as stack:
        key = scoped_key(stack, "alpha", ["inference"], note="nightly batch")
        prefix = key[3:13]
        began, _ = _fifty_calls(stack, key)
        assert metric(stack.url, WRITES) == 0  # 50 calls, no write yet
        assert "last_used=never" in _cli_listing(stack, prefix)
        stack.gateway.stop()  # SIGTERM: the lifespan flushes what it holds
        line = _cli_listing(stack, prefix)
    used = datetime.fromisoformat(line.split("last_used=")[1].split()[0])
    assert began.replace(microsecond=0) <= used <= datetime.now(UTC)
    assert "scopes=inference" in line and "note=nightly batch" in line


def test_uses_are_flushed_in_batches_one_write_per_key_per_flush(tmp_path: Path) -> None:
    flush_s = 2.0
    config = {"limits": {"key_last_used": {"flush_s": flush_s}}}
    with security_stack("postgres", tmp_path, config=config) as stack:
        key = stack.keys["alpha"]  # the only key this test uses (listings come from the CLI)
        began, took = _fifty_calls(stack, key)

        def listed_use() -> str | None:
            used = _cli_listing(stack, key[3:13]).split("last_used=")[1].split()[0]
            return None if used == "never" else used

        used = wait_for(listed_use, timeout=flush_s * 3 + 20, what="the last use listed")
        writes, flushes = metric(stack.url, WRITES), metric(stack.url, FLUSHES)
    assert began.replace(microsecond=0) <= datetime.fromisoformat(used) <= datetime.now(UTC)
    # One key was used: each flush is one UPDATE, and flushes follow the clock, not the calls
    # (a flush with nothing noted writes nothing).
    assert 1 <= writes == flushes <= 1 + math.ceil(took / flush_s), (writes, took)


def test_a_database_stuck_on_a_lock_does_not_hold_up_the_shutdown(tmp_path: Path) -> None:
    config = {"limits": {"key_last_used": {"flush_s": 3600}}}
    with security_stack("postgres", tmp_path, config=config) as stack:
        key = stack.keys["alpha"]
        headers = {"Authorization": f"Bearer {key}"}
        chat = httpx.post(f"{stack.url}/v1/chat/completions", json=CHAT, headers=headers)
        assert chat.status_code == 200
        plain = stack.database_url.replace("postgresql+psycopg", "postgresql")
        with psycopg.connect(plain) as locker:
            locker.execute("LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE")
            t0 = time.monotonic()
            code = stack.gateway.stop(timeout=30)
            took = time.monotonic() - t0
            locker.rollback()
        logged = stack.gateway.log_tail(200)
    assert code != -9, "the gateway had to be killed"  # it exited by itself
    assert took < 25, took
    assert "last use not written at shutdown" in logged  # the flush gave up, on its bound
