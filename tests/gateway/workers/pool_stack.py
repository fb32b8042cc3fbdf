"""`plumbline gateway --workers N` for the tests: started, its workers found, its /metrics read."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import redis

from gateway.recording.spool import Spool
from tests.reliability.gateway_metrics import scrape, total
from tests.support.gateway_process import GatewayProcess
from tests.support.waiting import wait_for

REDIS = "redis://127.0.0.1:6379/0"
Samples = dict[str, list[tuple[dict[str, str], float]]]


def pool_config(config: dict[str, Any]) -> dict[str, Any]:
    """A config several workers may serve: rate limits in Redis, one limit for all."""
    limits = {**config.get("limits", {}), "rate_limits": {"store": "redis"}}
    return {**config, "limits": limits}


@contextmanager
def running_pool(
    config: dict[str, Any], database_url: str, workers: int = 2
) -> Iterator[GatewayProcess]:
    """A started pool whose every worker answers; SIGTERM on exit, its Redis keys removed."""
    prefix = f"plumbline-test-pool-{uuid.uuid4().hex[:8]}:"
    env = {
        "PLUMBLINE_REDIS__URL": REDIS,
        "PLUMBLINE_WORKER__KEY_PREFIX": prefix,
        "PLUMBLINE_KEY_INVALIDATION__CHANNEL": "redis",
    }
    gateway = GatewayProcess(
        pool_config(config), database_url, env, args=("--workers", str(workers))
    )
    gateway.start()
    try:
        yield gateway
    finally:
        gateway.stop(timeout=120)
        client = redis.Redis.from_url(REDIS)
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)


def pool_metrics(url: str) -> Samples:
    """One scrape of the pool's /metrics, on a connection of its own (any worker may answer)."""
    return scrape(url)


def answering_worker(samples: Samples) -> str:
    """The worker that answered a scrape."""
    [(labels, _)] = samples["plumbline_gateway_scrape_worker"]
    return labels["worker"]


def worker_calls(samples: Samples) -> dict[str, float]:
    """Calls each worker counted."""
    return {labels["worker"]: v for labels, v in samples["plumbline_gateway_worker_calls"]}


def counted_samples(url: str, calls: int) -> Samples:
    """The pool's samples once its /metrics counts at least `calls` calls."""

    def probe() -> Samples | None:
        samples = pool_metrics(url)
        return samples if total(samples, "plumbline_calls_total") >= calls else None

    return wait_for(probe, timeout=30, what=f"{calls} calls counted")


def workers_scraped(url: str) -> float:
    """How many workers the pool's /metrics gathered (0 while none answers)."""
    try:
        return total(pool_metrics(url), "plumbline_gateway_workers", state="scraped")
    except httpx.HTTPError:
        return 0.0


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def children(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    return [
        int(path.name) for path in Path("/proc").glob("[0-9]*") if _parent(int(path.name)) == pid
    ]


def worker_pid(supervisor_pid: int, index: int) -> int | None:
    """The process of worker `index` of a pool, if one runs now."""
    for pid in children(supervisor_pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            b"gateway.worker_pool.worker_main" in argv
            and argv[argv.index(b"--index") + 1] == str(index).encode()
        ):
            return pid
    return None


def spooled_records(directory: Path) -> int:
    """Call records waiting in a spool directory's files."""
    return Spool(directory).pending_records()


def spooled_call_ids(spool_root: Path) -> set[str]:
    """Ids of the calls journaled in any worker's spool below `spool_root`."""
    return {
        str(row["id"])
        for directory in spool_root.glob("worker-*")
        for _, batch in Spool(directory).read_all()
        for row in batch.calls
    }
