"""The import contracts in pyproject.toml hold on the tree, and each one fails on a breach.

Each breach is written into a small package tree of the same names, checked with the contract as
it stands in pyproject.toml, so a contract that stops matching anything fails here.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _settings() -> dict[str, Any]:
    settings: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"][
        "importlinter"
    ]
    return settings


def _contract(name: str) -> dict[str, Any]:
    for contract in _settings()["contracts"]:
        if contract["name"] == name:
            return dict(contract)
    raise AssertionError(f"no contract named {name!r} in pyproject.toml")


def _lint(config: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(config)],
        cwd=cwd,
        env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _module_file(tree: Path, module: str) -> Path:
    """Create `module` (and its packages) in `tree`; the path of its __init__.py."""
    package = tree.joinpath(*module.split("."))
    package.mkdir(parents=True, exist_ok=True)
    for depth in range(1, len(module.split(".")) + 1):
        init = tree.joinpath(*module.split(".")[:depth], "__init__.py")
        if not init.exists():
            init.write_text("")
    return package / "__init__.py"


def _internal(module: str) -> bool:
    return module.split(".")[0] in _settings()["root_packages"]


def _tree(tmp_path: Path, contract: dict[str, Any], breach: str) -> Path:
    """A tree holding every module the contract names, plus `breach`; its contracts file."""
    for key in ("source_modules", "forbidden_modules", "protected_modules", "allowed_importers"):
        for module in contract.get(key, []):
            if _internal(module):
                _module_file(tmp_path, module)
    for root in _settings()["root_packages"]:
        _module_file(tmp_path, root)
    for ignored in contract.get("ignore_imports", []):
        # An exempted import, in use (import-linter refuses an exemption that matches nothing).
        importer, imported = ignored.split(" -> ")
        target = "gateway" if "*" in imported else imported
        _module_file(tmp_path, importer.replace(".**", ".app")).write_text(f"import {target}\n")
    importer, _, code = breach.partition(":")
    if importer:
        _module_file(tmp_path, importer).write_text(code)
    settings = {k: v for k, v in _settings().items() if k != "contracts"}
    lines = ["[tool.importlinter]", *(f"{k} = {_toml(v)}" for k, v in settings.items())]
    lines += ["", "[[tool.importlinter.contracts]]"]
    lines += [f"{k} = {_toml(v)}" for k, v in contract.items()]
    config = tmp_path / "contracts.toml"
    config.write_text("\n".join(lines) + "\n")
    return config


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


KIT = "the kit imports no application"
NO_APPS = "nothing imports the applications"
SIMULATOR = "the simulator imports nothing of Plumbline"
EVALS = "evals imports nothing of the gateway"
EVALS_PURE = "the evals' pure logic imports no database, ORM or domain package"
PROXY = "the proxy imports no ORM models, numpy, pandas or evals"
WORKERS = "workers import neither the web API nor the proxy"
GATEWAY_NO_WORKERS = "the gateway imports no worker code (it queues eval runs by task name)"
WEB_API = "only the app imports the web API"
HTTP = "Plumbline's HTTP client is aiohttp (and the proxy's own): no httpx"
# One breach per forbidden pair: "importer:code".
BREACHES = [
    *(
        (KIT, f"plumbline.db.breach:import {m}\n")
        for m in ("gateway", "evals", "workers", "simulator")
    ),
    *(
        (NO_APPS, f"{source}.breach:import apps\n")
        for source in ("plumbline", "gateway", "evals", "workers", "simulator")
    ),
    (NO_APPS, "gateway.proxy.breach:from apps.cli import main\n"),
    *(
        (SIMULATOR, f"simulator.breach:import {m}\n")
        for m in ("plumbline", "gateway", "evals", "workers")
    ),
    (EVALS, "evals.runs.repository.breach:from gateway import metering\n"),
    # One breach per forbidden module, from each pure package in turn.
    *(
        (EVALS_PURE, f"{source}.breach:import {m}\n")
        for source, m in (
            ("evals.alerting", "sqlalchemy"),
            ("evals.answers", "plumbline.db"),
            ("evals.divergence", "plumbline.models"),
            ("evals.gateway_client", "evals.alerts"),
            ("evals.report", "evals.live_sampling"),
            ("evals.scoring", "evals.paraphrases"),
            ("evals.suite", "evals.runs"),
            ("evals.alerting", "evals.suites"),
            ("evals.answers", "evals.errors"),
            ("evals.divergence", "evals.sweeps"),
            ("evals.scoring", "evals.transaction"),
        )
    ),
    *(
        (PROXY, f"{source}.breach:import {m}\n")
        for source in ("gateway.proxy", "gateway.upstream")
        for m in ("plumbline.models", "numpy", "pandas", "evals")
    ),
    (WORKERS, "workers.tasks.breach:import gateway.api\n"),
    (WORKERS, "workers.tasks.breach:import gateway.proxy\n"),
    (GATEWAY_NO_WORKERS, "gateway.api.breach:import workers.app\n"),
    (GATEWAY_NO_WORKERS, "gateway.proxy.breach:from workers import tasks\n"),
    (WEB_API, "gateway.usage.breach:import gateway.api\n"),
    (WEB_API, "evals.breach:from gateway.api import deps\n"),
    (WEB_API, "apps.demo.breach:import gateway.api\n"),
    *(
        (HTTP, f"{source}.breach:import httpx\n")
        for source in (
            "plumbline.outbound",
            "gateway.routing",
            "evals.alerts",
            "workers",
            "apps.cli",
        )
    ),
]


def test_the_tree_keeps_every_contract() -> None:
    result = _lint(ROOT / "pyproject.toml", ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    for contract in _settings()["contracts"]:
        assert f"{contract['name']} KEPT" in result.stdout


def test_every_contract_is_tried_here() -> None:
    named = {c["name"] for c in _settings()["contracts"]}
    assert named == {
        KIT,
        NO_APPS,
        SIMULATOR,
        EVALS,
        EVALS_PURE,
        PROXY,
        WORKERS,
        GATEWAY_NO_WORKERS,
        WEB_API,
        HTTP,
    }


@pytest.mark.parametrize(("name", "breach"), BREACHES)
def test_a_contract_fails_on_its_breach(tmp_path: Path, name: str, breach: str) -> None:
    config = _tree(tmp_path, _contract(name), breach)
    result = _lint(config, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{name} BROKEN" in result.stdout


@pytest.mark.parametrize(
    "name",
    [KIT, NO_APPS, SIMULATOR, EVALS, EVALS_PURE, PROXY, WORKERS, GATEWAY_NO_WORKERS, WEB_API, HTTP],
)
def test_a_contract_holds_on_its_tree_without_a_breach(tmp_path: Path, name: str) -> None:
    """The breaches above fail for the import they add, not for a tree that never checks."""
    config = _tree(tmp_path, _contract(name), "")
    result = _lint(config, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{name} KEPT" in result.stdout


# import-linter reads every import statement, wherever it stands: these count as breaches too.
HIDDEN_IMPORTS = {
    "type_checking": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import numpy\n",
    "in_a_function": "def later() -> None:\n    import numpy\n",
    "through_another_module": "import gateway.recording\n",
}


@pytest.mark.parametrize("kind", sorted(HIDDEN_IMPORTS))
def test_hidden_and_indirect_imports_are_breaches(tmp_path: Path, kind: str) -> None:
    config = _tree(tmp_path, _contract(PROXY), f"gateway.proxy.breach:{HIDDEN_IMPORTS[kind]}")
    indirect = _module_file(tmp_path, "gateway.recording")
    indirect.write_text("def later() -> None:\n    import numpy\n")
    result = _lint(config, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{PROXY} BROKEN" in result.stdout
