"""Where the project's installers put the benchmarks' other sides (under $PLUMBLINE_CACHE)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class MissingTool(RuntimeError):
    """A benchmark side is not installed; the message names the make target that installs it."""


def cache_dir() -> Path:
    """$PLUMBLINE_CACHE, or ~/.cache/plumbline as the Makefile defaults it."""
    return Path(os.environ.get("PLUMBLINE_CACHE") or Path.home() / ".cache" / "plumbline")


def nginx_binary() -> Path:
    """Debian's nginx, unpacked by scripts/nginx-tools."""
    path = cache_dir() / "nginx" / "usr" / "sbin" / "nginx"
    if not path.exists():
        raise MissingTool(f"{path} is missing: run `make nginx-tools`")
    return path


def nginx_version() -> str:
    """`nginx/1.22.1`, say."""
    out = subprocess.run([nginx_binary(), "-v"], capture_output=True, text=True, check=True)
    return out.stderr.strip().removeprefix("nginx version: ")


def litellm_version() -> str:
    """The release scripts/litellm-proxy-env pins (that script is the one place it is named)."""
    script = (ROOT / "scripts" / "litellm-proxy-env").read_text()
    match = re.search(r"^LITELLM_VERSION=(\S+)$", script, re.MULTILINE)
    if match is None:
        raise MissingTool("scripts/litellm-proxy-env names no LITELLM_VERSION")
    return match.group(1)


def litellm_executable() -> Path:
    """The `litellm` proxy CLI in its own venv, installed by scripts/litellm-proxy-env."""
    venv = os.environ.get("PLUMBLINE_LITELLM_VENV") or str(
        cache_dir() / f"litellm-proxy-{litellm_version()}"
    )
    path = Path(venv) / "bin" / "litellm"
    if not (Path(venv) / ".plumbline-ready").exists() or not path.exists():
        raise MissingTool(f"{path} is missing: run `make litellm-proxy-env`")
    return path


def vllm_version() -> str:
    """The vLLM CPU release scripts/vllm-env pins (that script is the one place it is named)."""
    script = (ROOT / "scripts" / "vllm-env").read_text()
    match = re.search(r"^VLLM_VERSION=(\S+)$", script, re.MULTILINE)
    if match is None:
        raise MissingTool("scripts/vllm-env names no VLLM_VERSION")
    return match.group(1)


def vllm_python() -> Path:
    """The python of the vLLM CPU venv that scripts/vllm-env installs."""
    venv = os.environ.get("PLUMBLINE_VLLM_VENV") or str(cache_dir() / f"vllm-cpu-{vllm_version()}")
    path = Path(venv) / "bin" / "python"
    if not (Path(venv) / ".plumbline-ready").exists() or not path.exists():
        raise MissingTool(f"{path} is missing: run `make vllm-env`")
    return path
