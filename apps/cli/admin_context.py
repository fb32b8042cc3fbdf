"""What the admin commands (keys, teams, end-users, retention) share: one audited transaction."""

from __future__ import annotations

import getpass
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from plumbline.settings import Settings


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error on stderr and exit."""
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def cli_actor() -> str:
    """How the audit log names whoever runs the command."""
    try:
        return f"cli ({getpass.getuser()})"
    except (KeyError, OSError):
        return "cli"


@contextmanager
def admin_transaction() -> Iterator[tuple[Settings, Session]]:
    """Settings and a session in one transaction; the gateway's 4xx errors exit cleanly."""
    from sqlalchemy import inspect

    from gateway.errors import GatewayError
    from plumbline.db import create_db_engine, make_session_factory
    from plumbline.settings import Settings

    settings = Settings()
    engine = create_db_engine(settings.database.url)
    try:
        if not inspect(engine).has_table("audit_log"):
            fail("the database is not at the newest schema; run `plumbline migrate` first.")
        with make_session_factory(engine)() as session, session.begin():
            yield settings, session
    except GatewayError as error:
        fail(error.message)
    finally:
        engine.dispose()
