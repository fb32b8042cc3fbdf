"""Alembic environment: the URL comes from the caller's config or from Plumbline settings."""

from __future__ import annotations

import re

from alembic import context
from sqlalchemy import Connection

import plumbline.models  # noqa: F401  (registers every table on Base.metadata)
from plumbline.db.base import Base
from plumbline.db.engine import create_db_engine
from plumbline.settings import Settings

PARTITION_NAME = re.compile(r"_p\d{8}(_r\d+)?$")


def include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """Leave the day (and day-and-class) partitions the log sink creates out of autogenerate."""
    return not (type_ == "table" and name is not None and PARTITION_NAME.search(name))


def run_with_connection(connection: Connection) -> None:
    """Run migrations on an open connection."""
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        compare_type=True,
        include_object=include_object,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations() -> None:
    """Entry point Alembic calls."""
    existing = context.config.attributes.get("connection")
    if existing is not None:
        run_with_connection(existing)
        return
    url = context.config.get_main_option("sqlalchemy.url") or Settings().database.url
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            run_with_connection(connection)
    finally:
        engine.dispose()


run_migrations()
