"""Describe the machine and software a benchmark ran on."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = (
    "uvicorn",
    "uvloop",
    "httptools",
    "fastapi",
    "aiohttp",
    "orjson",
    "sqlalchemy",
    "psycopg",
)


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_revision() -> str:
    """The commit the benchmark ran on, `+changes` when tracked files differ from it."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip() + (" +changes" if changed.stdout.strip() else "")


def describe(extra: tuple[str, ...] = (), tools: tuple[str, ...] = ()) -> str:
    """One line: CPU, cores, OS, Python, key packages, other tools' versions, commit."""
    names = []
    for name in (*PACKAGES, *extra):
        try:
            names.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            continue
    names += tools
    return (
        f"{cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; {', '.join(names)}; commit {git_revision()}"
    )
