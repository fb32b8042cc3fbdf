"""The previous release's code, from git, run by this environment's interpreter.

A rolling deploy runs the release being replaced beside the new one on the schema migrated to
the new head, and the new release replays the old one's spool. PREVIOUS_RELEASE names that
release; bump it to the commit a deploy replaces whenever a release is cut (docs/operations.md,
"Rolling upgrades"). The tree is `git archive`d into a temporary directory; its processes run
with the shared venv's python, the old tree on PYTHONPATH and PYTHONSAFEPATH set: `python -m`
(the gateway, and the recorder child it starts) would otherwise put the working directory first
on sys.path, and the venv's editable install resolves the packages to this checkout.
"""

from __future__ import annotations

import ast
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VERSIONS = REPO / "migrations" / "versions"
# d22883e: the tip of main when the rolling-upgrade tests landed (issue 18), the release a deploy
# of this work replaces.
PREVIOUS_RELEASE = "d22883e5bce755724254ed3f2e67fc1ae9c2fe16"
# What the previous release needs to run: its packages (the migrations too, to list them).
PACKAGES = ("apps", "evals", "gateway", "migrations", "plumbline", "simulator", "workers")


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", str(REPO), *args], capture_output=True, timeout=120, check=False
    )


def require_commit(commit: str = PREVIOUS_RELEASE) -> None:
    """Fail (never skip) with what to do when the clone lacks the pinned commit."""
    if _git("cat-file", "-e", f"{commit}^{{commit}}").returncode == 0:
        return
    shallow = _git("rev-parse", "--is-shallow-repository").stdout.decode().strip()
    pytest.fail(
        f"the previous release {commit[:12]} is not in this clone (shallow: {shallow}); the "
        "rolling-upgrade tests run that release's code. Clone with full history, or "
        f"`git fetch --unshallow` / `git fetch origin {commit}`.",
        pytrace=False,
    )


def extract(destination: Path, commit: str = PREVIOUS_RELEASE) -> Path:
    """`git archive` of the release's packages, unpacked under `destination`; its root."""
    require_commit(commit)
    archived = _git("archive", "--format=tar", commit, *PACKAGES)
    assert archived.returncode == 0, archived.stderr.decode()
    root = destination / f"release-{commit[:12]}"
    root.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archived.stdout)) as archive:
        archive.extractall(root, filter="data")
    return root


def release_env(root: Path) -> dict[str, str]:
    """Environment for a process (and its children) of the release at `root`."""
    return {"PYTHONPATH": str(root), "PYTHONSAFEPATH": "1"}


def run_python(root: Path, code: str) -> str:
    """Run `code` with the release's packages; its stdout."""
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **release_env(root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def module_files(root: Path, *modules: str) -> dict[str, str]:
    """Where the release's interpreter finds each module (to prove it runs the old tree)."""
    code = (
        "import importlib, json, sys\n"
        f"print(json.dumps({{m: importlib.import_module(m).__file__ for m in {list(modules)!r}}}))"
    )
    found: dict[str, str] = json.loads(run_python(root, code))
    return found


def model_columns(root: Path) -> dict[str, list[str]]:
    """Table -> columns of the release's ORM models: what its code reads and writes."""
    code = (
        "import json\nimport plumbline.models\nfrom plumbline.db.base import Base\n"
        "print(json.dumps({t.name: [c.name for c in t.columns]"
        " for t in Base.metadata.tables.values()}))"
    )
    found: dict[str, list[str]] = json.loads(run_python(root, code))
    return found


def _revision(path: Path) -> str:
    for node in ast.parse(path.read_text()).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == "revision":
            assert isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Constant)
            return str(node.value.value)
    raise AssertionError(f"{path.name} has no `revision: str = ...`")


def revisions(versions: Path) -> dict[str, Path]:
    """Revision id -> migration file in a versions folder."""
    return {_revision(p): p for p in sorted(versions.glob("*.py")) if p.name != "__init__.py"}
