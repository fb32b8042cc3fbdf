"""Backend faults give the client a prompt OpenAI-shaped error (or a retry elsewhere), recorded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import orjson
import pytest

from plumbline.child_process import free_port
from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import simulator_config
from tests.support.waiting import wait_until

pytestmark = pytest.mark.xdist_group("gateway-faults")
QUESTION = [{"role": "user", "content": "What is the indemnity cap in this contract?"}]


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def flaky() -> Iterator[SimulatorProcess]:
    with SimulatorProcess(simulator_config()) as sim:
        yield sim


@pytest.fixture(scope="module")
def spare() -> Iterator[SimulatorProcess]:
    with SimulatorProcess(simulator_config()) as sim:
        yield sim


@pytest.fixture(scope="module")
def gateway(flaky: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    config = gateway_config(flaky.base_url, limits={"read_timeout_s": 1.0})
    with GatewayProcess(config, database) as process:
        yield process


@pytest.fixture(scope="module")
def pair_gateway(
    flaky: SimulatorProcess, spare: SimulatorProcess, database: str
) -> Iterator[GatewayProcess]:
    config = gateway_config(flaky.base_url)
    config["models"][0]["backends"].append({"url": spare.base_url})
    with GatewayProcess(config, database) as process:
        yield process


@pytest.fixture(scope="module")
def key(database: str) -> str:
    return issue_key(database, "team-faults")


@pytest.fixture(scope="module")
def calls(database: str) -> Iterator[CallReader]:
    reader = CallReader(database)
    yield reader
    reader.close()


def _backends_healthy(gateway: GatewayProcess) -> int:
    health = httpx.get(f"{gateway.url}/health", timeout=10).json()
    return int(health["backends_healthy"])


@pytest.fixture(autouse=True)
def healthy_again(flaky: SimulatorProcess, request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    flaky.set_faults({})
    # The next test starts once the health checks have put every backend back in rotation.
    for name in ("gateway", "pair_gateway"):
        if name in request.fixturenames:
            used: GatewayProcess = request.getfixturevalue(name)
            total = httpx.get(f"{used.url}/health", timeout=10).json()["backends_total"]
            wait_until(
                lambda g=used, n=total: _backends_healthy(g) == n,
                timeout=30,
                what=f"every backend of {name} back in rotation",
            )


def _chat(gateway: GatewayProcess, key: str, **body: Any) -> httpx.Response:
    return httpx.post(
        f"{gateway.url}/v1/chat/completions",
        json={"model": "tiny", "messages": QUESTION, **body},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )


def _stream_events(response: httpx.Response) -> list[Any]:
    parts = [p for p in response.content.split(b"\n\n") if p]
    return [p.decode() if p == b"data: [DONE]" else orjson.loads(p[6:]) for p in parts]


def _error_ends_stream(response: httpx.Response, status: int) -> None:
    events = _stream_events(response)
    assert events[-1] == "data: [DONE]"
    assert events[-2]["error"]["code"] == status
    assert set(events[-2]["error"]) == {"message", "type", "param", "code"}


def test_garbage_body_is_a_502(
    gateway: GatewayProcess, flaky: SimulatorProcess, key: str, calls: CallReader
) -> None:
    flaky.set_faults({"garbage": {"rate": 1.0}})
    response = _chat(gateway, key)
    assert response.status_code == 502
    assert response.json()["error"]["type"] == "BadGatewayError"
    assert calls.wait(response.headers["x-plumbline-call-id"]).status_code == 502


@pytest.mark.parametrize(
    ("faults", "status"),
    [
        ({"garbage": {"rate": 1.0, "after_tokens": 2}}, 502),
        ({"close_mid_stream": {"rate": 1.0, "after_tokens": 2}}, 502),
        # A stall far past the client's 30 s timeout: only the gateway's 1 s read timeout
        # can end this stream with a 504 event; waiting the stall out fails the call.
        ({"stall_mid_stream": {"rate": 1.0, "after_tokens": 2, "seconds": 600.0}}, 504),
        ({"error": {"rate": 1.0, "status": 500, "after_tokens": 2}}, 500),
    ],
)
def test_mid_stream_faults_end_the_stream_with_an_error_event(
    gateway: GatewayProcess,
    flaky: SimulatorProcess,
    key: str,
    calls: CallReader,
    faults: dict[str, Any],
    status: int,
) -> None:
    flaky.set_faults(faults)
    response = _chat(gateway, key, stream=True, max_tokens=20)
    assert response.status_code == 200
    _error_ends_stream(response, status)
    row = calls.wait(response.headers["x-plumbline-call-id"])
    assert row.status_code == status and row.stream
    assert row.completion_tokens is not None and row.completion_tokens >= 2


def test_stall_before_first_byte_is_a_504(
    gateway: GatewayProcess, flaky: SimulatorProcess, key: str, calls: CallReader
) -> None:
    flaky.set_faults({"stall_first_byte": {"rate": 1.0, "seconds": 600.0}})
    response = _chat(gateway, key)
    assert response.status_code == 504
    assert calls.wait(response.headers["x-plumbline-call-id"]).status_code == 504


def test_backend_error_passes_through_in_its_shape(
    gateway: GatewayProcess, flaky: SimulatorProcess, key: str, calls: CallReader
) -> None:
    flaky.set_faults({"error": {"rate": 1.0, "status": 503}})
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as client:
        with pytest.raises(openai.APIStatusError) as raised:
            client.chat.completions.create(model="tiny", messages=QUESTION)  # type: ignore[arg-type]
    assert raised.value.status_code == 503
    row = calls.wait(raised.value.response.headers["x-plumbline-call-id"])
    assert row.status_code == 503


def test_engine_dead_takes_the_backend_out_of_rotation(
    gateway: GatewayProcess, flaky: SimulatorProcess, key: str, calls: CallReader
) -> None:
    flaky.set_faults({"engine_dead": True})
    wait_until(lambda: _backends_healthy(gateway) == 0, timeout=30, what="backend out of rotation")
    received = flaky.stats()["requests_received"]
    response = _chat(gateway, key)
    # Answered by the gateway alone: the backend out of rotation never saw the call.
    assert flaky.stats()["requests_received"] == received
    assert response.status_code == 503
    assert "No healthy backend" in response.json()["error"]["message"]
    assert calls.wait(response.headers["x-plumbline-call-id"]).status_code == 503


def test_errors_are_retried_on_another_backend(
    pair_gateway: GatewayProcess,
    flaky: SimulatorProcess,
    spare: SimulatorProcess,
    key: str,
    calls: CallReader,
) -> None:
    flaky.set_faults({"error": {"rate": 1.0, "status": 500}})
    statuses = [_chat(pair_gateway, key, max_tokens=3) for _ in range(6)]
    assert all(r.status_code == 200 for r in statuses)
    rows = [calls.wait(r.headers["x-plumbline-call-id"]) for r in statuses]
    assert {row.backend for row in rows} == {spare.base_url}


def test_a_dead_backend_is_skipped(
    database: str, spare: SimulatorProcess, key: str, calls: CallReader
) -> None:
    config = gateway_config(f"http://127.0.0.1:{free_port()}")
    config["models"][0]["backends"].append({"url": spare.base_url})
    with GatewayProcess(config, database) as process:
        responses = [_chat(process, key, max_tokens=3) for _ in range(5)]
    assert [r.status_code for r in responses] == [200] * 5


def test_no_backend_at_all_is_a_503(database: str, key: str, calls: CallReader) -> None:
    config = gateway_config(f"http://127.0.0.1:{free_port()}")
    with GatewayProcess(config, database) as process:
        response = _chat(process, key)
    assert response.status_code == 503
    assert calls.wait(response.headers["x-plumbline-call-id"]).status_code == 503
