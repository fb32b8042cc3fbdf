"""Throwaway, migrated databases: a Postgres database per test module, or a SQLite file."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import func, select

from plumbline.db import create_db_engine
from plumbline.migrate import upgrade_to_head

PG_ADMIN_URL = os.environ.get("PLUMBLINE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def _admin_connection() -> psycopg.Connection:
    try:
        return psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as error:
        pytest.fail(
            f"Postgres is not reachable at {PG_ADMIN_URL} ({error}); start it with "
            "`scripts/ensure-services` or set PLUMBLINE_TEST_PG."
        )


@contextmanager
def postgres_database(prefix: str = "plumbline_test") -> Iterator[str]:
    """Create an empty Postgres database, migrate it, yield its URL, drop it afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with _admin_connection() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN_URL.rsplit("/", 1)[0]
    url = f"{base}/{name}"
    try:
        upgrade_to_head(url)
        yield url
    finally:
        with _admin_connection() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def sqlite_database(directory: Path) -> Iterator[str]:
    """A migrated SQLite file in `directory`."""
    url = f"sqlite:///{directory / 'plumbline.db'}"
    upgrade_to_head(url)
    yield url


def count_rows(url: str, model: type) -> int:
    """Rows of a mapped table in the database at `url`."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.scalar(select(func.count()).select_from(model)) or 0)
    finally:
        engine.dispose()
