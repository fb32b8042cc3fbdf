"""Database statement parameters (call bodies, prompts, key hashes) never reach an error or log."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from plumbline.db import create_db_engine
from tests.support.databases import postgres_database, sqlite_database

SECRET = "sk-client-secret-5f1e9a7c3b"


@pytest.fixture(params=["postgres", "sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated database of each dialect."""
    if request.param == "postgres":
        with postgres_database("plumbline_hidden") as url:
            yield url
    else:
        with sqlite_database(tmp_path) as url:
            yield url


def test_a_failing_statement_does_not_show_its_parameters(
    database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    engine = create_db_engine(database_url, echo=True)
    caplog.set_level(logging.INFO, logger="sqlalchemy.engine")
    try:
        with pytest.raises(SQLAlchemyError) as failure, engine.begin() as connection:
            connection.execute(text("SELECT :name FROM no_such_table"), {"name": SECRET})
    finally:
        engine.dispose()
    assert SECRET not in str(failure.value)
    assert SECRET not in repr(failure.value)
    assert SECRET not in caplog.text
    assert "hidden due to hide_parameters" in str(failure.value)
