"""A real stack for eval tests: simulator, migrated database, gateway process, admin key."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from plumbline.db import create_db_engine, make_session_factory
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database, sqlite_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key


@dataclass(frozen=True)
class EvalStack:
    """Everything an eval run needs, all real processes on loopback."""

    simulator: SimulatorProcess
    gateway: GatewayProcess
    database_url: str
    engine: Engine
    sessions: sessionmaker[Session]
    admin_key: str


@contextmanager
def database(kind: str, directory: Path) -> Iterator[str]:
    """A migrated Postgres database or SQLite file."""
    if kind == "postgres":
        with postgres_database("plumbline_evals") as url:
            yield url
    else:
        with sqlite_database(directory) as url:
            yield url


@contextmanager
def eval_stack(
    kind: str,
    directory: Path,
    simulator_config: dict[str, Any],
    *,
    model_overrides: dict[str, Any] | None = None,
    **gateway_overrides: Any,
) -> Iterator[EvalStack]:
    """Start simulator and gateway on a fresh database; stop everything afterwards."""
    with ExitStack() as stack:
        simulator = stack.enter_context(SimulatorProcess(simulator_config))
        url = stack.enter_context(database(kind, directory))
        admin_key = issue_key(url, "ops", admin=True)
        config = gateway_config(simulator.base_url, **gateway_overrides)
        config["models"][0].update(model_overrides or {})
        # API-started eval work is sent with the admin eval key (eval: labels are admin-only).
        gateway = GatewayProcess(config, url, env={"PLUMBLINE_EVAL__API_KEY": admin_key})
        stack.enter_context(gateway)
        engine = create_db_engine(url)
        stack.callback(engine.dispose)
        yield EvalStack(simulator, gateway, url, engine, make_session_factory(engine), admin_key)
