"""A Postgres cluster the test owns (initdb + pg_ctl on its own port), to stop and start at will.

The machine's main cluster on 5432 is shared with every other test; an outage test needs one
nobody else uses. Postgres refuses to run as root, so under root the binaries run as `postgres`.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from plumbline.child_process import free_port
from plumbline.migrate import upgrade_to_head


def postgres_bin_dir() -> Path:
    """The newest /usr/lib/postgresql/*/bin that has initdb and pg_ctl."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3])
    )
    if not found:
        raise RuntimeError("no /usr/lib/postgresql/*/bin/initdb: install the postgresql package")
    return Path(found[-1]).parent


class PostgresCluster:
    """`initdb` in a temporary directory, served on a free loopback port with trust auth."""

    def __init__(self) -> None:
        self.bin = postgres_bin_dir()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="plumbline-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self._as_postgres = os.geteuid() == 0

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / args[0]), *args[1:]]
        if self._as_postgres:
            command = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=120)

    def init(self) -> None:
        """Create the data directory."""
        if self._as_postgres:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        options = (
            f"port = {self.port}\nlisten_addresses = '127.0.0.1'\n"
            f"unix_socket_directories = '{self.root}'\nmax_connections = 100\n"
            # Stops are process crashes, never machine crashes: the page cache survives them,
            # so fsync can go. Commits stay synchronous, or a crash would lose acknowledged rows.
            "fsync = off\nfull_page_writes = off\n"
        )
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(options)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        result = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "start")
        if result.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {result.stderr}\n{self.log_tail()}")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`immediate` is a crash: no checkpoint, clients cut off)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def running(self) -> bool:
        """Whether the server is up."""
        return self._run("pg_ctl", "-D", str(self.data), "status", check=False).returncode == 0

    def processes(self) -> list[int]:
        """The postmaster and its children."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        found = [postmaster]
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                found.append(int(entry.name))
        return found

    def freeze(self) -> list[int]:
        """SIGSTOP every server process: connections stay open and nothing answers (a hang)."""
        frozen = self.processes()
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        return frozen

    @staticmethod
    def thaw(frozen: list[int]) -> None:
        """SIGCONT what `freeze` stopped."""
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)

    def url(self, database: str = "postgres") -> str:
        """A SQLAlchemy URL of a database of this cluster."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create and migrate a database; its URL."""
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=5) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        url = self.url(name)
        upgrade_to_head(url)
        return url

    def log_tail(self, characters: int = 3000) -> str:
        """The end of the server log."""
        return self.log.read_text(errors="replace")[-characters:] if self.log.exists() else ""

    def remove(self) -> None:
        """Stop the server and delete its files."""
        if self.data.exists():
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A started cluster of the test's own, removed afterwards."""
    cluster = PostgresCluster()
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.remove()
