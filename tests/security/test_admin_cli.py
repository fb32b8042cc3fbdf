"""`plumbline keys rotate|limits`, `teams set|list`, as an operator runs them; all audited."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select

from gateway.auth.service import authenticate
from plumbline.child_process import plumbline_command
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import AuditEntry

PEPPER = "cli-security-pepper"


def _run(database: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PLUMBLINE_DATABASE__URL": database, "PLUMBLINE_KEY_SALT": PEPPER, "PATH": "/usr/bin"}
    return subprocess.run(
        plumbline_command(*args), capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_rotate_limits_and_team_policies(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    assert _run(database, "migrate").returncode == 0
    old = _run(database, "keys", "create", "--team", "legal", "--rpm", "100").stdout.strip()
    prefix = old[3:13]
    rotated = _run(database, "keys", "rotate", prefix, "--grace-s", "600")
    assert rotated.returncode == 0, rotated.stderr
    new = rotated.stdout.strip()
    assert new.startswith("pl-") and new != old and f"replaces {prefix}" in rotated.stderr
    listed = _run(database, "keys", "list", "--team", "legal").stdout
    assert f"{prefix}  legal" in listed and "revoking" in listed and "rpm=100" in listed
    assert new.split(".")[1] not in listed
    limits = _run(database, "keys", "limits", new[3:13], "--tpm", "5000")
    assert limits.returncode == 0, limits.stderr
    policy = _run(database, "teams", "set", "legal", "--rpm", "60", "--retention-days", "30")
    assert policy.returncode == 0 and "retention_days=30" in policy.stdout
    refused = _run(database, "teams", "set", "legal", "--retention-days", "45")
    assert refused.returncode == 1 and "must be one of 1, 7, 14, 30" in refused.stderr
    assert "Traceback" not in refused.stderr
    missing = _run(database, "keys", "rotate", "ffffffffff")
    assert missing.returncode == 1 and "no active key" in missing.stderr
    assert "legal" in _run(database, "teams", "list").stdout

    engine = create_db_engine(database)
    sessions = make_session_factory(engine)
    with sessions() as session:
        info = authenticate(session, new, PEPPER)
        assert info is not None and info.key_tokens_per_minute == 5000
        assert info.key_requests_per_minute == 100 and info.requests_per_minute == 60
        assert info.retention_days == 30
        assert authenticate(session, old, PEPPER) is not None  # in its grace period
        actions = [e.action for e in session.scalars(select(AuditEntry).order_by(AuditEntry.id))]
        actors = {e.actor for e in session.scalars(select(AuditEntry))}
    engine.dispose()
    assert actions == ["key.create", "key.rotate", "key.limits", "team.policy"]
    assert all(a.startswith("cli") for a in actors)


def test_keys_create_with_scopes_expiry_and_note_and_their_listing(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    assert _run(database, "migrate").returncode == 0
    last_day = datetime.now(UTC).date() + timedelta(days=365)
    ends = f"expires={last_day + timedelta(days=1)}T00:00:00+00:00"  # through that day, UTC
    created = _run(
        database,
        *("keys", "create", "--team", "legal", "--scope", "inference", "--scope", "read"),
        *("--expires", last_day.isoformat(), "--note", "contract review bot"),
    )
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert "scopes=inference,read" in created.stderr
    assert ends in created.stderr
    in_days = _run(database, "keys", "create", "--team", "legal", "--expires", "90d")
    assert in_days.returncode == 0 and "scopes=inference,read,evals" in in_days.stderr
    listed = _run(database, "keys", "list", "--team", "legal").stdout
    line = next(row for row in listed.splitlines() if row.startswith(key[3:13]))
    assert "scopes=inference,read" in line and ends in line
    assert "last_used=never" in line and "note=contract review bot" in line
    for args, words in [
        (("--scope", "admin"), "Unknown scope `admin`"),
        (("--expires", "2001-01-01"), "in the past"),
        (("--note", "n" * 501), "it may have 500"),
        (("--admin", "--scope", "read"), "admin key holds every scope"),
    ]:
        refused = _run(database, "keys", "create", "--team", "legal", *args)
        assert refused.returncode == 1 and words in refused.stderr, (args, refused.stderr)
        assert "Traceback" not in refused.stderr
    help_text = _run(database, "keys", "revoke", "--help").stdout
    assert "30 seconds (at once" not in help_text and "redis" in help_text

    engine = create_db_engine(database)
    with make_session_factory(engine)() as session:
        info = authenticate(session, key, PEPPER)
        entry = session.scalars(select(AuditEntry).order_by(AuditEntry.id)).first()
    engine.dispose()
    assert info is not None and info.scopes == {"inference", "read"}
    assert info.expires_at is not None and info.expires_at.date() == last_day + timedelta(days=1)
    assert entry is not None and entry.details["scopes"] == ["inference", "read"]
