"""The pinned previous release: present, a real predecessor, and loud when missing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.upgrades.previous_release import (
    PREVIOUS_RELEASE,
    REPO,
    VERSIONS,
    require_commit,
    revisions,
)


def test_the_pinned_release_precedes_this_checkout(previous_release: Path) -> None:
    ancestor = subprocess.run(
        ["git", "-C", str(REPO), "merge-base", "--is-ancestor", PREVIOUS_RELEASE, "HEAD"],
        check=False,
        timeout=60,
    )
    assert ancestor.returncode == 0, "PREVIOUS_RELEASE must be an ancestor of this checkout"
    # This release's migrations extend the previous release's chain, never rewrite it.
    old = revisions(previous_release / "migrations" / "versions")
    current = revisions(VERSIONS)
    assert set(old) <= set(current)
    for revision, path in old.items():
        assert current[revision].read_text() == path.read_text(), f"{path.name} was edited"


def test_a_clone_without_the_release_fails_loudly_instead_of_skipping() -> None:
    with pytest.raises(pytest.fail.Exception, match=r"not in this clone.*full history"):
        require_commit("0" * 40)
