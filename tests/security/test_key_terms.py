"""Scopes read from a tampered column, expiry parsing, and the bounds of the last-use buffer."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from gateway.auth.key_expiry import parse_expiry
from gateway.auth.keys import KeyInfo
from gateway.auth.last_use import LastUse
from gateway.auth.last_use_flusher import LastUseFlusher
from gateway.auth.scopes import READ, holds, parse_scopes
from gateway.errors import GatewayError
from plumbline.db import create_db_engine, make_session_factory
from plumbline.repositories.api_keys import record_last_used
from tests.support.databases import sqlite_database

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def test_a_tampered_scopes_column_grants_only_known_scopes() -> None:
    assert parse_scopes("inference,superuser,admin") == {"inference"}
    nothing = KeyInfo(1, 1, "t", is_admin=False, store_bodies=False, scopes=parse_scopes(""))
    assert not any(holds(nothing, s) for s in ("inference", "read", "evals", "admin"))
    legacy = KeyInfo(1, 1, "t", is_admin=False, store_bodies=False, scopes=parse_scopes(None))
    assert holds(legacy, READ) and not holds(legacy, "admin")


def test_expiry_forms() -> None:
    assert parse_expiry("2027-03-31", NOW) == datetime(2027, 4, 1, tzinfo=UTC)
    assert parse_expiry("90d", NOW) == NOW + timedelta(days=90)
    assert parse_expiry("2027-01-01T10:00:00+02:00", NOW) == datetime(2027, 1, 1, 8, tzinfo=UTC)
    assert parse_expiry("2027-01-01T10:00:00", NOW) == datetime(2027, 1, 1, 10, tzinfo=UTC)
    edges = ("9999-12-31", "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00")
    for bad in ("2026-12-02", "2026-12-03T11:59:59Z", "-5d", "1e9d", "3651d", "soon", "", *edges):
        with pytest.raises(GatewayError) as raised:
            parse_expiry(bad, NOW)
        assert raised.value.status == 400 and raised.value.param == "expires", bad


def test_the_last_use_buffer_is_bounded() -> None:
    uses = LastUse(max_keys=3)
    for key_id in (1, 2, 3, 4, 5, 0, -1):
        uses.note(key_id)
    uses.note(1)  # a held key is updated however full the buffer is
    assert len(uses) == 3 and uses.dropped == 2
    taken = uses.take()
    assert set(taken) == {1, 2, 3} and len(uses) == 0
    uses.note(9)
    uses.put_back({1: 1.0, 2: 2.0, 3: 3.0, 9: 0.0})
    assert len(uses) == 3 and uses.dropped == 3 and uses.take()[9] > 0.0  # the newer time kept


def test_a_failed_flush_keeps_the_uses_for_the_next(tmp_path: Path) -> None:
    with sqlite_database(tmp_path) as url:
        engine = create_db_engine(url)
        sessions = make_session_factory(engine)
        uses = LastUse(max_keys=10)
        flusher = LastUseFlusher(uses, sessions, record_last_used, interval_s=3600)
        with engine.begin() as connection:
            connection.execute(text("ALTER TABLE api_keys RENAME TO api_keys_away"))
        uses.note(7)
        asyncio.run(flusher.flush())
        assert flusher.failures == 1 and flusher.writes == 0 and len(uses) == 1
        with engine.begin() as connection:
            connection.execute(text("ALTER TABLE api_keys_away RENAME TO api_keys"))
        asyncio.run(flusher.stop())  # the flush at shutdown writes what the failed one kept
        engine.dispose()
    assert flusher.writes == 1 and flusher.flushes == 1 and len(uses) == 0
