"""Fixtures: a migrated database per module on Postgres and on SQLite, and its sessions."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session, sessionmaker

from plumbline.db import create_db_engine, make_session_factory
from tests.evals_integration.stack import database


@pytest.fixture(scope="module", params=["postgres", "sqlite"])
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A freshly migrated database, one per module and kind."""
    with database(request.param, tmp_path_factory.mktemp("evals-db")) as url:
        yield url


@pytest.fixture(scope="module")
def sessions(database_url: str) -> Iterator[sessionmaker[Session]]:
    """Sessions on the module's database."""
    engine = create_db_engine(database_url)
    try:
        yield make_session_factory(engine)
    finally:
        engine.dispose()


@pytest.fixture
def name() -> str:
    """A suite name no other test uses."""
    return f"s-{uuid.uuid4().hex[:10]}"
