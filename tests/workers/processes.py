"""`plumbline worker` and `plumbline beat` as real child processes, with their own logs."""

from __future__ import annotations

import os
import signal
import subprocess

from plumbline.child_process import KILL_REAP_S, ServerProcess, plumbline_command

READY = {"worker": " ready.", "beat": "beat: Starting"}


class CeleryProcess(ServerProcess):
    """A worker or beat process: started in its own session, ready once its log says so."""

    def __init__(self, role: str, args: list[str], env: dict[str, str], timeout: float = 60.0):
        super().__init__(
            plumbline_command(role, *args), env=env, startup_timeout=timeout, ready_line=READY[role]
        )
        self.role = role

    def start(self) -> CeleryProcess:
        """Start and wait for the ready line."""
        super().start()
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

    def stop(self, timeout: float = 20.0) -> int | None:
        """Warm shutdown (SIGTERM to the group: the pool too), then SIGKILL whatever lingers."""
        if self.process is None:
            return None
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
        return self.process.returncode

    def __enter__(self) -> CeleryProcess:
        return self.start()
