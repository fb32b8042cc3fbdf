"""Fixtures: a migrated database per module (Postgres and SQLite) and a suite with alerts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session, sessionmaker

from plumbline.db import create_db_engine, make_session_factory
from tests.evals_integration.stack import database


@pytest.fixture(scope="module", params=["postgres", "sqlite"])
def sessions(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[sessionmaker[Session]]:
    """Sessions on a freshly migrated database."""
    with database(request.param, tmp_path_factory.mktemp("alerts-db")) as url:
        engine = create_db_engine(url)
        try:
            yield make_session_factory(engine)
        finally:
            engine.dispose()
