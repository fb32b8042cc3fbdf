"""An idle client connection outlives the clients' own keep-alive, then is closed (a bound)."""

from __future__ import annotations

import http.client
import json
import select
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from simulator.process import SimulatorProcess
from tests.reliability.stack import LIGHT, ZERO_TIME, reliability_config, running_gateway
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, issue_key

pytestmark = [pytest.mark.xdist_group("reliability"), pytest.mark.timeout(120)]

# The openai SDK (httpx) keeps an idle connection 5 s; uvicorn's default closed it at 5 s too.
CLIENT_KEEP_ALIVE_S = 5.0
IDLE_CHECK_S = CLIENT_KEEP_ALIVE_S + 1.0


@pytest.fixture(scope="module")
def backend() -> Iterator[SimulatorProcess]:
    with SimulatorProcess({"timing": ZERO_TIME}) as simulator:
        yield simulator


def _call(connection: http.client.HTTPConnection, key: str) -> int:
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    connection.request("POST", "/v1/chat/completions", json.dumps(LIGHT), headers)
    response = connection.getresponse()
    response.read()
    return response.status


def _closed_within(connection: http.client.HTTPConnection, seconds: float) -> bool:
    """Whether the gateway closes the idle connection (EOF on its socket) within `seconds`."""
    assert connection.sock is not None
    readable, _, _ = select.select([connection.sock], [], [], seconds)
    return bool(readable) and connection.sock.recv(1) == b""


@contextmanager
def _gateway(backend: SimulatorProcess, **limits: int) -> Iterator[tuple[GatewayProcess, str]]:
    """A gateway with these `limits` (its defaults otherwise) and a key for it."""
    overrides = {"limits": limits} if limits else {}
    with postgres_database("plumbline_keepalive") as database:
        key = issue_key(database, "team-keepalive")
        with running_gateway(reliability_config(backend.base_url, **overrides), database) as gw:
            yield gw, key


def test_a_connection_idle_past_the_clients_keep_alive_still_serves(
    backend: SimulatorProcess,
) -> None:
    with _gateway(backend) as (gateway, key):
        connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30)
        assert _call(connection, key) == 200
        # Main closed it at 5 s: a client reusing it just then got "Server disconnected".
        assert not _closed_within(connection, IDLE_CHECK_S)
        assert _call(connection, key) == 200
        connection.close()


def test_an_idle_connection_is_closed_after_keep_alive_s(backend: SimulatorProcess) -> None:
    with _gateway(backend, keep_alive_s=1) as (gateway, key):
        connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30)
        assert _call(connection, key) == 200
        assert _closed_within(connection, 30)
        connection.close()
