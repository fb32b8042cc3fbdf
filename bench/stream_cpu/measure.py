"""Stream calls through one side and read the CPU its processes used, per call and per token."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bench.harness.load import Request, Sample, client_session, closed_loop
from bench.harness.procstat import process_tree
from bench.proxies.sides import Side
from tests.support.databases import PG_ADMIN_URL


def stream_body(tokens: int, top_logprobs: int) -> Request:
    """A streamed chat call of `tokens` tokens with usage, as vLLM's benchmark client sends it."""
    body: dict[str, Any] = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "Summarise the termination clause, please."}],
        "max_tokens": tokens,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
        "seed": 7,
    }
    if top_logprobs:
        body |= {"logprobs": True, "top_logprobs": top_logprobs}
    return Request.of(body)


@dataclass(frozen=True)
class CpuRun:
    """CPU seconds of the side's own process and of its children over one run."""

    calls: int
    tokens: int
    main_s: float
    # The kernel's share of `main_s` (socket reads and writes, epoll, futexes).
    main_sys_s: float
    children_s: float
    # The Postgres backends of the gateway's database (its recorder's writes, key lookups).
    database_s: float
    wall_s: float
    samples: list[Sample]

    def per_token_us(self, seconds: float) -> float:
        """Microseconds per streamed token."""
        return seconds / (self.calls * self.tokens) * 1e6

    def per_call_us(self, seconds: float) -> float:
        """Microseconds per call."""
        return seconds / self.calls * 1e6


def _user_sys(pid: int) -> tuple[float, float]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def _children_cpu(pid: int) -> float:
    total = 0.0
    for member in process_tree(pid)[1:]:
        try:
            total += sum(_user_sys(member))
        except OSError:
            continue
    return total


def _database_pids(pid: int) -> list[int]:
    """The Postgres backends serving the database the process records to (none: not Postgres)."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    urls = [v.split(b"=", 1)[1] for v in environ if v.startswith(b"PLUMBLINE_DATABASE__URL=")]
    if not urls or not urls[0].startswith(b"postgresql"):
        return []
    name = urls[0].rsplit(b"/", 1)[1].decode()
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        rows = admin.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (name,))
        return [int(row[0]) for row in rows]


def _pids_cpu(pids: list[int]) -> dict[int, float]:
    found = {}
    for pid in pids:
        try:
            found[pid] = sum(_user_sys(pid))
        except OSError:
            continue
    return found


def run_calls(side: Side, request: Request, tokens: int, calls: int, workers: int) -> CpuRun:
    """Send `calls` streams, `workers` at a time, measuring the side's CPU around them."""
    database = _database_pids(side.pid) if side.name == "plumbline" else []
    user0, sys0 = _user_sys(side.pid)
    children0, wall0 = _children_cpu(side.pid), time.perf_counter()
    database0 = _pids_cpu(database)
    samples = asyncio.run(closed_loop(side.url, request, side.headers, workers, calls))
    wall = time.perf_counter() - wall0
    user1, sys1 = _user_sys(side.pid)
    children = _children_cpu(side.pid) - children0
    database1 = _pids_cpu(database)
    database_s = sum(database1[p] - database0[p] for p in database1 if p in database0)
    bad = [s for s in samples if s.status != 200]
    if bad:
        raise RuntimeError(f"{len(bad)} of {calls} calls failed: {bad[0]}")
    main = user1 - user0 + sys1 - sys0
    return CpuRun(calls, tokens, main, sys1 - sys0, children, database_s, wall, samples)


@contextmanager
def strace_counts(pid: int, output: Path) -> Iterator[Path]:
    """`strace -c -f` on `pid` (its threads) while the block runs; the summary at `output`."""
    command = ["strace", "-c", "-f", "-o", str(output), "-p", str(pid)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    try:
        # strace says so on stderr once it traces the process: only then does counting start.
        for line in process.stderr:
            if b"attached" in line:
                break
        yield output
    finally:
        process.terminate()
        process.wait(30)


def syscall_counts(summary: Path) -> dict[str, int]:
    """Calls per syscall from an `strace -c` summary."""
    counts: dict[str, int] = {}
    for line in summary.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0].replace(".", "").isdigit() and parts[-1] != "total":
            counts[parts[-1]] = int(parts[3])
    return counts


async def _overheads(side: Side, request: Request, calls: int) -> list[float]:
    found: list[float] = []
    async with client_session(1) as session:
        for _ in range(calls):
            async with session.post(side.url, data=request.payload, headers=side.headers) as got:
                await got.read()
                found.append(float(got.headers.get("x-plumbline-overhead-ms", "nan")))
    return found


def gateway_overheads(side: Side, request: Request, calls: int) -> list[float]:
    """The gateway's own milliseconds per call (`x-plumbline-overhead-ms`), one call at a time.

    Sent with the stream's head, it is the time from arrival to the upstream request: the
    gateway's share of TTFT before the backend's first byte.
    """
    return asyncio.run(_overheads(side, request, calls))
