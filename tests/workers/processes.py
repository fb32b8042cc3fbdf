"""`plumbline worker` and `plumbline beat` as real child processes, with their own logs."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

from plumbline.child_process import KILL_REAP_S, plumbline_command
from tests.support.waiting import wait_until

READY = {"worker": " ready.", "beat": "beat: Starting"}


class CeleryProcess:
    """A worker or beat process: started in its own session, ready once its log says so."""

    def __init__(self, role: str, args: list[str], env: dict[str, str], timeout: float = 60.0):
        self.role = role
        self.args = plumbline_command(role, *args)
        self.env = {**os.environ, **env}
        self.timeout = timeout
        self.log_path = Path(tempfile.mkstemp(prefix=f"plumbline-{role}-", suffix=".log")[1])
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> CeleryProcess:
        """Start and wait for the ready line."""
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.args,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
        process = self.process

        def ready() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"{self.role} exited at start-up:\n{self.log()[-4000:]}")
            return READY[self.role] in self.log()

        try:
            wait_until(ready, timeout=self.timeout, what=f"{self.role} ready line", poll=0.1)
        except AssertionError:
            self.stop()
            raise RuntimeError(
                f"{self.role} not ready after {self.timeout} s:\n{self.log()[-4000:]}"
            ) from None
        return self

    def log(self) -> str:
        """Everything the process wrote so far."""
        return self.log_path.read_text(errors="replace")

    def logs(self) -> str:
        """The same, for `wait_for`."""
        return self.log()

    def kill(self) -> None:
        """SIGKILL the whole process group (main process and pool children), no cleanup."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self, timeout: float = 20.0) -> None:
        """Warm shutdown (SIGTERM), then SIGKILL whatever lingers."""
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.process.poll() is None:
            self.process.wait(KILL_REAP_S)

    def __enter__(self) -> CeleryProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
