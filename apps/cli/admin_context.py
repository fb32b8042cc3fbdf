"""What the admin commands (keys, teams, end-users, retention) share: one audited transaction."""

from __future__ import annotations

import getpass
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

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


def announce_key_changes(settings: Settings, sessions: sessionmaker[Session]) -> None:
    """Publish the key and team changes a command commits (key_invalidation.channel: redis)."""
    if settings.key_invalidation.channel != "redis":
        return
    from redis.exceptions import RedisError

    from gateway.auth.invalidation.changes import KeyChange, publish_after_commit
    from gateway.auth.invalidation.publisher import RedisChangePublisher, channel_name

    channel = channel_name(settings.worker.key_prefix)

    def publish(changes: Sequence[KeyChange]) -> None:
        publisher = RedisChangePublisher(settings.redis.url, channel)
        try:
            publisher.publish(changes)
        except RedisError as error:
            typer.secho(
                f"warning: the change is committed but could not be announced to the gateways "
                f"({error}); a gateway stops trusting what it cached within "
                "limits.key_cache_ttl_s (30 s by default), or key_invalidation.unconfirmed_ttl_s "
                "if its own subscription is down too",
                fg=typer.colors.YELLOW,
                err=True,
            )
        finally:
            publisher.close()

    publish_after_commit(sessions, publish)


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
        sessions = make_session_factory(engine)
        announce_key_changes(settings, sessions)
        with sessions() as session, session.begin():
            yield settings, session
    except GatewayError as error:
        fail(error.message)
    finally:
        engine.dispose()
