"""`plumbline teams set --models`, `keys create|limits --models`: set, listed, refused, audited."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sqlalchemy import select

from gateway.auth.service import authenticate
from gateway.governance.model_access import ModelAccess
from plumbline.child_process import plumbline_command
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import AuditEntry

PEPPER = "cli-models-pepper"


def _run(database: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PLUMBLINE_DATABASE__URL": database, "PLUMBLINE_KEY_SALT": PEPPER, "PATH": "/usr/bin"}
    return subprocess.run(
        plumbline_command(*args), capture_output=True, text=True, env=env, timeout=120, check=False
    )


def _refused(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 1, done.stdout
    assert says in done.stderr and "Traceback" not in done.stderr


def test_model_lists_set_listed_and_cleared(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    assert _run(database, "migrate").returncode == 0
    created = _run(database, "keys", "create", "--team", "legal", "--models", "llama-8b*, qwen-7b")
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    team = _run(database, "teams", "set", "legal", "--models", "llama-*,qwen-*")
    assert team.returncode == 0, team.stderr
    assert "allowed_models=['llama-*', 'qwen-*']" in team.stdout
    assert "models=llama-*,qwen-*" in _run(database, "teams", "list").stdout
    assert "models=llama-8b*,qwen-7b" in _run(database, "keys", "list", "--team", "legal").stdout

    engine = create_db_engine(database)
    sessions = make_session_factory(engine)
    with sessions() as session:
        info = authenticate(session, key, PEPPER)
    assert info is not None
    assert info.models == ModelAccess(team=("llama-*", "qwen-*"), key=("llama-8b*", "qwen-7b"))

    cleared = _run(database, "keys", "limits", key[3:13], "--all-models")
    assert cleared.returncode == 0 and "models=team" in cleared.stdout
    assert _run(database, "teams", "set", "legal", "--all-models").returncode == 0
    assert "models=all" in _run(database, "teams", "list").stdout
    with sessions() as session:
        info = authenticate(session, key, PEPPER)
        actions = [e.action for e in session.scalars(select(AuditEntry).order_by(AuditEntry.id))]
    engine.dispose()
    assert info is not None and info.models == ModelAccess()
    assert actions == ["key.create", "team.policy", "key.limits", "team.policy"]


def test_bad_model_options_are_refused_saying_what_to_do(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    assert _run(database, "migrate").returncode == 0
    assert _run(database, "keys", "create", "--team", "legal").returncode == 0
    _refused(_run(database, "teams", "set", "legal", "--models", " , "), "--all-models allows")
    _refused(_run(database, "teams", "set", "legal", "--models", "a b"), "no spaces")
    _refused(_run(database, "teams", "set", "legal", "--models", "a", "--all-models"), "not both")
    too_many = ",".join(f"m{i}" for i in range(65))
    _refused(_run(database, "teams", "set", "legal", "--models", too_many), "at most 64")
    _refused(
        _run(database, "keys", "create", "--team", "legal", "--admin", "--models", "x"),
        "Admin keys call every model",
    )
    assert "models=all" in _run(database, "teams", "list").stdout
