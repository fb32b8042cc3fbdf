"""What every `plumbline eval` command needs: sessions, a gateway client, clear failures."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn, TypeVar

import typer

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from evals.gateway_client import GatewayClient
    from plumbline.settings import Settings

T = TypeVar("T")
DEFAULT_GATEWAY = "http://127.0.0.1:8080"


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error on stderr and exit."""
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


@contextmanager
def database() -> Iterator[tuple[Settings, sessionmaker[Session]]]:
    """The settings and a session factory on the configured database."""
    from sqlalchemy import inspect

    from plumbline.db import create_db_engine, make_session_factory
    from plumbline.settings import Settings

    settings = Settings()
    engine = create_db_engine(settings.database.url)
    try:
        if not inspect(engine).has_table("eval_suites"):
            fail("the database has no eval tables; run `plumbline migrate` first.")
        yield settings, make_session_factory(engine)
    finally:
        engine.dispose()


def run_service(sessions: sessionmaker[Session], work: Callable[..., T], *args: object) -> T:
    """Run a service function in one transaction; service errors become clean exits."""
    from evals.errors import EvalServiceError
    from evals.transaction import in_transaction

    try:
        return in_transaction(sessions, work, *args)
    except EvalServiceError as error:
        fail(error.message)


def eval_key(settings: Settings) -> str:
    """The configured eval key, or a clean exit saying how to set one."""
    key = settings.eval.api_key
    if key is None or not key.get_secret_value():
        fail(
            "set PLUMBLINE_EVAL__API_KEY to an admin key (`plumbline keys create --team ops "
            "--admin`): eval calls go through the gateway on behalf of each suite's team."
        )
    return key.get_secret_value()


def gateway_client(settings: Settings, gateway: str | None) -> GatewayClient:
    """A client of the gateway with the configured eval key (an admin key)."""
    from evals.gateway_client import GatewayClient

    url = gateway or settings.eval.gateway_url or DEFAULT_GATEWAY
    return GatewayClient(url, eval_key(settings), timeout_s=settings.eval.request_timeout_s)
