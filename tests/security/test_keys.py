"""Keys: only salted hashes stored, constant-time checks, rotation with grace, audited changes."""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from gateway.auth import keys as key_module
from gateway.auth import service as auth_service
from gateway.auth.key_cache import POSITIVE_TTL_S, KeyCache
from gateway.auth.keys import KeyInfo
from gateway.auth.service import (
    authenticate,
    create_key,
    revoke_key,
    rotate_key,
    set_key_limits,
)
from gateway.auth.teams import set_team_policy
from gateway.errors import GatewayError
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import ApiKey, AuditEntry
from tests.support.databases import sqlite_database

PEPPER = "unit-pepper"


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    with sqlite_database(tmp_path) as url:
        engine = create_db_engine(url)
        yield make_session_factory(engine)
        engine.dispose()


def _key(sessions: sessionmaker[Session], team: str = "legal", **options: object) -> str:
    with sessions.begin() as session:
        return create_key(session, team, PEPPER, **options).plaintext  # type: ignore[arg-type]


def _auth(sessions: sessionmaker[Session], plaintext: str, pepper: str = PEPPER) -> KeyInfo | None:
    with sessions() as session:
        return authenticate(session, plaintext, pepper)


def test_only_a_salted_peppered_hash_is_stored(sessions: sessionmaker[Session]) -> None:
    first, second = _key(sessions), _key(sessions)
    with sessions() as session:
        rows = session.scalars(select(ApiKey)).all()
    secrets = [k.split(".", 1)[1] for k in (first, second)]
    for row in rows:
        stored = f"{row.salt} {row.key_hash}"
        assert all(s not in stored for s in secrets)
    assert rows[0].salt != rows[1].salt
    assert _auth(sessions, first) is not None
    assert _auth(sessions, first, pepper="another-deployment") is None  # the pepper matters


def test_every_verdict_goes_through_one_constant_time_comparison(
    sessions: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _key(sessions)
    prefix = key.split(".")[0]
    seen: list[tuple[str, str]] = []
    compare = hmac.compare_digest

    def recording_compare(a: str, b: str) -> bool:
        seen.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(key_module.hmac, "compare_digest", recording_compare)
    cases = {
        key: True,
        key[:-1] + ("A" if key[-1] != "A" else "B"): False,  # last character wrong
        prefix + ".x": False,  # right prefix, short wrong secret
        "pl-ffffffffff." + key.split(".")[1]: False,  # unknown prefix: a dummy comparison
    }
    for presented, valid in cases.items():
        seen.clear()
        assert (_auth(sessions, presented) is not None) is valid
        assert len(seen) == 1, presented
        assert all(len(a) == len(b) == 64 for a, b in seen)


def test_rotation_issues_a_like_key_and_the_old_one_ends_after_its_grace(
    sessions: sessionmaker[Session],
) -> None:
    old = _key(sessions, admin=True, name="eval-worker", requests_per_minute=50)
    prefix = old[3:13]
    with sessions.begin() as session:
        rotation = rotate_key(session, prefix, PEPPER, grace_s=3600)
    new = _auth(sessions, rotation.issued.plaintext)
    assert new is not None and new.is_admin and new.team_name == "legal"
    assert new.key_requests_per_minute == 50 and rotation.issued.name == "eval-worker"
    during = _auth(sessions, old)
    assert during is not None and during.revokes_at is not None
    assert timedelta(minutes=59) < during.revokes_at - datetime.now(UTC) <= timedelta(hours=1)
    with sessions.begin() as session:
        revoke_key(session, prefix)  # ending the grace early
    assert _auth(sessions, old) is None
    with sessions.begin() as session, pytest.raises(GatewayError) as raised:
        revoke_key(session, prefix)
    assert raised.value.status == 404


def test_rotation_without_grace_revokes_at_once(sessions: sessionmaker[Session]) -> None:
    old = _key(sessions)
    with sessions.begin() as session:
        rotation = rotate_key(session, old[3:13], PEPPER)
    assert _auth(sessions, old) is None
    assert _auth(sessions, rotation.issued.plaintext) is not None


def test_cached_verdicts_never_outlive_a_grace_period() -> None:
    base = KeyInfo(key_id=1, team_id=1, team_name="t", is_admin=False, store_bodies=False)
    soon = KeyInfo(**{**_fields(base), "revokes_at": datetime.now(UTC) + timedelta(seconds=4)})
    over = KeyInfo(**{**_fields(base), "revokes_at": datetime.now(UTC) - timedelta(seconds=1)})
    cache = KeyCache(make_session_factory(create_db_engine("sqlite://")), PEPPER, auth_service)
    assert cache._ttl(base) == POSITIVE_TTL_S
    assert 0 < cache._ttl(soon) <= 4
    assert cache._ttl(over) == 0
    assert KeyCache(cache._sessions, PEPPER, auth_service, ttl_s=2)._ttl(soon) == 2


def _fields(info: KeyInfo) -> dict[str, object]:
    return {name: getattr(info, name) for name in info.__slots__}  # type: ignore[attr-defined]


def test_limits_and_policies_are_validated_and_audited(sessions: sessionmaker[Session]) -> None:
    key = _key(sessions)
    with sessions.begin() as session:
        set_key_limits(session, key[3:13], {"requests_per_minute": 10})
        set_team_policy(session, "legal", {"retention_days": 30, "tokens_per_minute": 5000})
    info = _auth(sessions, key)
    assert info is not None and info.key_requests_per_minute == 10
    assert info.tokens_per_minute == 5000 and info.retention_days == 30
    for values in ({"retention_days": 5}, {"requests_per_minute": 0}, {"owner": "x"}):
        with sessions.begin() as session, pytest.raises(GatewayError) as raised:
            set_team_policy(session, "legal", values)
        assert raised.value.status == 400
    with sessions() as session:
        actions = [e.action for e in session.scalars(select(AuditEntry).order_by(AuditEntry.id))]
    assert actions == ["key.create", "key.limits", "team.policy"]
