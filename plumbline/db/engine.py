"""Engine and session factories for Postgres (psycopg 3) and SQLite."""

from __future__ import annotations

from typing import Any

import psycopg
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker


def normalize_url(url: str) -> str:
    """Use the psycopg 3 driver for plain postgres URLs."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def _configure_sqlite(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets the gateway's writer and the read API work at once; busy_timeout rides out locks.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_db_engine(
    url: str, *, pool_size: int = 5, echo: bool = False, writer: bool = False
) -> Engine:
    """Build an engine with sensible per-dialect settings (`writer`: see below)."""
    url = normalize_url(url)
    # Statement parameters are call bodies, prompts and key hashes: errors and echo must not
    # carry them into logs.
    if url.startswith("sqlite"):
        engine = create_engine(
            url, echo=echo, hide_parameters=True, connect_args={"check_same_thread": False}
        )
        event.listen(engine, "connect", _configure_sqlite)
        return engine
    connect_args: dict[str, Any] = {"connect_timeout": 5}
    if writer:
        # A writer of wide rows (the recorder: about 80 columns a call) sends `$n` placeholders
        # psycopg passes on as they are: with `%(name)s` it re-parses every statement of more
        # than 50 parameters (its cache stops there), about 0.1 ms a call row.
        connect_args["cursor_factory"] = psycopg.RawCursor
    return create_engine(
        url,
        echo=echo,
        hide_parameters=True,
        pool_size=pool_size,
        max_overflow=pool_size,
        # A writer that retries a statement on a dropped connection itself needs no ping
        # (a round trip) before each one.
        pool_pre_ping=not writer,
        pool_recycle=1800,
        connect_args=connect_args,
        **({"paramstyle": "numeric_dollar"} if writer else {}),
    )


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded objects usable after commit."""
    return sessionmaker(bind=engine, expire_on_commit=False)
