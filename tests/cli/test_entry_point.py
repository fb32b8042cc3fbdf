"""The `plumbline` console script names the CLI's entry point, which lives in the applications."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

from apps.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_console_script_runs_the_cli_main() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, name = scripts["plumbline"].partition(":")
    assert getattr(importlib.import_module(module), name) is main
