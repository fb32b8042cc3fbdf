"""A redis-server the test owns, on its own port, to kill and bring back (empty) at will."""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from plumbline.child_process import free_port
from tests.support.waiting import wait_until


class RedisServer:
    """`redis-server` on a free loopback port, without persistence: a restart comes back empty."""

    def __init__(self) -> None:
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="plumbline-redis-"))
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The URL clients connect to."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and wait for PONG."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", str(self.directory)]
        log = (self.directory / "redis.log").open("ab")
        with log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        client = redis.Redis.from_url(self.url, socket_timeout=1)

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False

        try:
            wait_until(answers, timeout=10, what=f"redis-server on port {self.port}")
        except AssertionError as error:
            raise RuntimeError(str(error)) from None
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL: everything it held (queued and unacked messages, leases) is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        self.process = None

    def remove(self) -> None:
        """Stop the server and delete its directory."""
        self.kill()
        shutil.rmtree(self.directory, ignore_errors=True)


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    """A started server of the test's own, removed afterwards."""
    server = RedisServer()
    try:
        server.start()
        yield server
    finally:
        server.remove()
