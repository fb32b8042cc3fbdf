"""Fixtures for end-to-end gateway tests: a simulator, a migrated database, a gateway, keys."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database, sqlite_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import simulator_config


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    with SimulatorProcess(simulator_config()) as sim:
        yield sim


@pytest.fixture(scope="module", params=["postgres", "sqlite"])
def database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    if request.param == "postgres":
        with postgres_database() as url:
            yield url
    else:
        with sqlite_database(tmp_path_factory.mktemp("sqlite")) as url:
            yield url


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    # Postgres runs the default recorder process; SQLite the in-process sink, so both stay tested.
    recording = {"flush_interval_ms": 20, "in_process": database.startswith("sqlite")}
    config = gateway_config(simulator.base_url, recording=recording)
    with GatewayProcess(config, database) as process:
        yield process


@pytest.fixture(scope="module")
def team_key(database: str) -> str:
    return issue_key(database, "team-a")


@pytest.fixture(scope="module")
def other_team_key(database: str) -> str:
    return issue_key(database, "team-b")


@pytest.fixture(scope="module")
def admin_key(database: str) -> str:
    return issue_key(database, "platform", admin=True)


@pytest.fixture(scope="module")
def client(gateway: GatewayProcess, team_key: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=team_key, max_retries=0) as c:
        yield c


@pytest.fixture(scope="module")
def direct(simulator: SimulatorProcess) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{simulator.base_url}/v1", api_key="unused", max_retries=0) as c:
        yield c


@pytest.fixture(scope="module")
def calls(database: str) -> Iterator[CallReader]:
    reader = CallReader(database)
    yield reader
    reader.close()
