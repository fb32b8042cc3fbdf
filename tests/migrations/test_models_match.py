"""`alembic upgrade head` on an empty database leaves nothing for autogenerate to add."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

import plumbline.models  # noqa: F401  (registers every table on Base.metadata)
from plumbline.db import create_db_engine
from plumbline.db.base import Base
from plumbline.migrate import alembic_config
from tests.support.databases import postgres_database, sqlite_database

CALLS_AND_ACCESS = "f0ae42929556"  # the revision before the eval tables


def pending_changes(url: str) -> list[object]:
    """What autogenerate would still emit against the database at `url`."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def added_tables(changes: list[object]) -> set[str]:
    """Names of the tables autogenerate would create."""
    return {c[1].name for c in changes if isinstance(c, tuple) and c[0] == "add_table"}


def test_postgres_schema_matches_models() -> None:
    with postgres_database("plumbline_schema") as url:
        assert pending_changes(url) == []


def test_sqlite_schema_matches_models(tmp_path: Path) -> None:
    with sqlite_database(tmp_path) as url:
        assert pending_changes(url) == []


def test_downgrade_removes_eval_tables_and_upgrade_restores_them(tmp_path: Path) -> None:
    with sqlite_database(tmp_path) as url:
        config = alembic_config(url)
        command.downgrade(config, CALLS_AND_ACCESS)
        assert added_tables(pending_changes(url)) >= {
            "eval_suites",
            "eval_questions",
            "eval_paraphrases",
            "eval_runs",
            "eval_samples",
            "eval_question_results",
        }
        command.upgrade(config, "head")
        assert pending_changes(url) == []
