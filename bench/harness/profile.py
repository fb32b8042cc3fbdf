"""py-spy on a running process: record while a block runs, then name where the time went."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import sysconfig
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_FRAME = re.compile(r"^(?P<function>.+?) \((?P<file>[^()]*?):\d+\)$")


def py_spy() -> str:
    """The py-spy executable of this interpreter's environment (the dev extra installs it)."""
    local = Path(sys.executable).with_name("py-spy")
    found = str(local) if local.exists() else shutil.which("py-spy")
    if found is None:
        raise RuntimeError("py-spy is missing: pip install -e '.[dev]'")
    return found


@contextmanager
def recording(
    pid: int, output: Path, rate: int = 200, subprocesses: bool = False
) -> Iterator[Path]:
    """Sample `pid` (all threads, native frames off) into collapsed stacks at `output`."""
    command = [py_spy(), "record", "--pid", str(pid), "--format", "raw", "--output", str(output)]
    command += ["--rate", str(rate), "--nonblocking", "--threads"]
    if subprocesses:
        command.append("--subprocesses")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield output
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@dataclass(frozen=True)
class Hotspot:
    """A function and the share of samples it was on the stack (inclusive) or on top (self)."""

    function: str
    inclusive: float
    own: float


def _frames(stack: str) -> list[str]:
    # The standard library's frames (threading, asyncio's loop) are on every stack: noise.
    stdlib = sysconfig.get_paths()["stdlib"]
    names = []
    for frame in stack.split(";"):
        match = _FRAME.match(frame.strip())
        if match is None:
            continue
        path = match.group("file")
        if path.startswith(stdlib) or path.startswith("<"):
            continue
        short = "/".join(Path(path).parts[-2:])
        names.append(f"{match.group('function')} ({short})")
    return names


def hotspots(
    collapsed: Path, top: int = 12, within: str = "", *, by_own: bool = False
) -> list[Hotspot]:
    """The `top` functions by inclusive (or, `by_own`, on-top) share; `within` filters frames."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in collapsed.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        frames = [f for f in _frames(stack) if within in f]
        for name in set(frames):
            inclusive[name] += count
        if frames:
            own[frames[-1]] += count
    if not total:
        return []
    ranked = own if by_own else inclusive
    return [
        Hotspot(name, inclusive[name] / total, own[name] / total)
        for name, _ in ranked.most_common(top)
    ]


def hotspot_lines(spots: list[Hotspot]) -> list[str]:
    """Markdown table lines."""
    lines = ["| function | on stack | on top |", "| --- | ---: | ---: |"]
    lines += [f"| `{s.function}` | {s.inclusive:.0%} | {s.own:.0%} |" for s in spots]
    return lines
