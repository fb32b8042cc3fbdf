"""The real vLLM (CPU build) on the tiny model, started by scripts/vllm-server on vLLM's CPUs."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from bench.harness.procstat import process_tree
from bench.proxies.installed import ROOT, vllm_python
from bench.vllm_serve.cores import CorePlan, allowed_cpus

LAUNCHER = ROOT / "scripts" / "vllm-server"
MODEL_BUILDER = ROOT / "tools" / "tiny_model" / "build.py"
# Compiling the model's graphs on a busy 2-CPU machine takes minutes; a warm cache about 30 s.
STARTUP_TIMEOUT_S = 900
STOP_TIMEOUT_S = 60


def tiny_model_dir(seed: int = 0) -> str:
    """The tiny model's directory (the launcher serves the same one), built unless cached."""
    out = subprocess.run(
        [str(vllm_python()), str(MODEL_BUILDER), "--seed", str(seed)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip().splitlines()[-1]


class VllmServer:
    """scripts/vllm-server in the foreground, stopped by closing its stdin (the launcher's rule)."""

    def __init__(self, plan: CorePlan, log: Path | None = None) -> None:
        self.plan = plan
        self.log = log or Path(tempfile.mkdtemp(prefix="plumbline-vllm-")) / "server.log"
        self.url = ""
        self.pgid = 0
        self.process: subprocess.Popen[str] | None = None

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(urlsplit(self.url).port or 0)

    def _pin(self) -> None:
        # Runs in the child before exec: the launcher and everything it starts inherit this.
        os.sched_setaffinity(0, self.plan.vllm)

    def start(self) -> VllmServer:
        """Start it and wait for its `ready URL pgid=N log=FILE` line."""
        env = dict(os.environ)
        if self.plan.pinned:
            # vLLM binds its OpenMP threads itself; name the CPU rather than let it pick one.
            env["VLLM_CPU_OMP_THREADS_BIND"] = self.plan.vllm_bind
        command = [sys.executable, str(LAUNCHER), "--log", str(self.log)]
        command += ["--startup-timeout", str(STARTUP_TIMEOUT_S)]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=self._pin if self.plan.pinned else None,
        )
        assert self.process.stdout is not None
        ready = self.process.stdout.readline().split()
        if len(ready) < 3 or ready[0] != "ready":
            self.stop()
            err = self.process.stderr.read() if self.process.stderr else ""
            raise RuntimeError(f"vLLM did not start (rc={self.process.returncode}):\n{err}")
        self.url = ready[1]
        self.pgid = int(ready[2].removeprefix("pgid="))
        return self

    def cpus_of_processes(self) -> frozenset[int]:
        """Every CPU any of the server's processes may run on (checks the pinning held)."""
        found: set[int] = set()
        for pid in process_tree(self.pgid):
            with contextlib.suppress(OSError):
                found |= allowed_cpus(pid)
        return frozenset(found)

    def stop(self) -> None:
        """Close the launcher's stdin (it stops the server); kill the group if it lingers."""
        if self.process is None:
            return
        if self.process.stdin and not self.process.stdin.closed:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.pgid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signal.SIGKILL)

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
