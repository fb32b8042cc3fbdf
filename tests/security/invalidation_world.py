"""What the key invalidation tests share: gateways on one channel, their metrics, the CLI."""

from __future__ import annotations

import re
import subprocess

import httpx

from plumbline.child_process import plumbline_command
from tests.support.gateway_process import TEST_PEPPER, GatewayProcess
from tests.support.waiting import wait_until

MESSAGES = [{"role": "user", "content": "What is the governing law of the agreement?"}]
APPLIED = 'plumbline_key_invalidations_total{outcome="applied"}'
FLUSHED = 'plumbline_key_invalidations_total{outcome="flushed"}'
CHANNEL_UP = "plumbline_key_invalidation_channel_up"
RECHECKS = "plumbline_key_cache_rechecks_total"


def channel_env(redis_url: str, prefix: str, **extra: str) -> dict[str, str]:
    """The environment of a gateway or CLI on the channel of `prefix`."""
    return {
        "PLUMBLINE_REDIS__URL": redis_url,
        "PLUMBLINE_WORKER__KEY_PREFIX": prefix,
        "PLUMBLINE_KEY_INVALIDATION__CHANNEL": "redis",
        **extra,
    }


def chat(gateway: GatewayProcess, key: str) -> int:
    """The status of one small chat call."""
    return httpx.post(
        f"{gateway.url}/v1/chat/completions",
        json={"model": "tiny", "messages": MESSAGES, "max_tokens": 4},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    ).status_code


def metric(gateway: GatewayProcess, line_start: str) -> float:
    """One sample of the gateway's /metrics."""
    page = httpx.get(f"{gateway.url}/metrics", timeout=10).text
    found = re.search(rf"^{re.escape(line_start)} (\S+)$", page, re.MULTILINE)
    assert found is not None, line_start
    return float(found.group(1))


def wait_channel_up(gateway: GatewayProcess) -> None:
    """Return once the gateway's subscription is confirmed live."""
    wait_until(lambda: metric(gateway, CHANNEL_UP) == 1, timeout=30, what="channel live")


def cli(database_url: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`plumbline <args>` as an operator runs it, on the gateways' database and channel."""
    full = {"PLUMBLINE_DATABASE__URL": database_url, "PLUMBLINE_KEY_SALT": TEST_PEPPER}
    full.update(env, PATH="/usr/bin")
    return subprocess.run(
        plumbline_command(*args), capture_output=True, text=True, env=full, timeout=120, check=False
    )
