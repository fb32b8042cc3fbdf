"""`plumbline migrate` and `plumbline keys` as a user runs them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gateway.auth.service import authenticate
from plumbline.child_process import plumbline_command
from plumbline.db import create_db_engine, make_session_factory

PEPPER = "cli-test-pepper"


def _run(*args: str, database: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PLUMBLINE_DATABASE__URL": database,
        "PLUMBLINE_KEY_SALT": PEPPER,
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        plumbline_command(*args), capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_migrate_create_list_and_revoke_keys(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    migrated = _run("migrate", database=database)
    assert migrated.returncode == 0, migrated.stderr
    created = _run("keys", "create", "--team", "payments", "--admin", database=database)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert key.startswith("pl-") and "cannot be shown again" in created.stderr
    listed = _run("keys", "list", database=database)
    prefix = key[3:].split(".")[0]
    assert prefix in listed.stdout and "payments" in listed.stdout and key not in listed.stdout
    engine = create_db_engine(database)
    sessions = make_session_factory(engine)
    with sessions() as session:
        info = authenticate(session, key, PEPPER)
    assert info is not None and info.is_admin and info.team_name == "payments"
    revoked = _run("keys", "revoke", prefix, database=database)
    assert revoked.returncode == 0, revoked.stderr
    with sessions() as session:
        assert authenticate(session, key, PEPPER) is None
    again = _run("keys", "revoke", prefix, database=database)
    assert again.returncode == 1 and "no active key" in again.stderr
    engine.dispose()


def test_the_stored_hash_is_not_the_key(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'hash.db'}"
    _run("migrate", database=database)
    key = _run("keys", "create", "--team", "t", database=database).stdout.strip()
    raw = (tmp_path / "hash.db").read_bytes()
    assert key.encode() not in raw and key.split(".")[1].encode() not in raw


def test_gateway_refuses_an_unmigrated_database(tmp_path: Path) -> None:
    config = tmp_path / "gw.yaml"
    config.write_text("models:\n  - name: m\n    backends: [{url: 'http://127.0.0.1:9'}]\n")
    result = _run("gateway", "--config", str(config), database=f"sqlite:///{tmp_path / 'empty.db'}")
    assert result.returncode == 1
    assert "run `plumbline migrate` first" in result.stderr
    assert "Traceback" not in result.stderr


def test_gateway_reports_a_bad_config_clearly(tmp_path: Path) -> None:
    config = tmp_path / "gw.yaml"
    config.write_text("models:\n  - name: m\n")
    result = _run("gateway", "--config", str(config), database=f"sqlite:///{tmp_path / 'x.db'}")
    assert result.returncode == 2
    assert "needs at least one backend" in result.stderr
