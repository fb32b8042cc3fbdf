"""Bad input gets an OpenAI-shaped 4xx, never a 500, and the call is still recorded."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from gateway.recording import call_queries
from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess
from tests.support.sink_written import wait_until_sink_written

pytestmark = pytest.mark.xdist_group("gateway-e2e")
CHAT = "/v1/chat/completions"


def _post(
    gateway: GatewayProcess, key: str | None, content: bytes, **headers: str
) -> httpx.Response:
    all_headers = {"Content-Type": "application/json", **headers}
    if key is not None:
        all_headers["Authorization"] = f"Bearer {key}"
    return httpx.post(f"{gateway.url}{CHAT}", content=content, headers=all_headers, timeout=30)


def _assert_openai_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == status and error["message"]
    return dict(error)


def _recorded(calls: CallReader, response: httpx.Response) -> Any:
    return calls.wait(response.headers["x-plumbline-call-id"])


@pytest.mark.parametrize(
    ("content", "status", "fragment"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[1, 2, 3]", 400, "JSON object"),
        (b'{"messages": []}', 400, "model"),
        (b'{"model": "nope", "messages": []}', 404, "does not exist"),
        (b'{"model": 12, "messages": []}', 400, "model"),
        (b"\xff\xfe invalid utf-8", 400, "not valid JSON"),
        (b"[" * 5000 + b"]" * 5000, 400, "not valid JSON"),
    ],
)
def test_malformed_requests_are_rejected_and_recorded(
    gateway: GatewayProcess,
    team_key: str,
    calls: CallReader,
    content: bytes,
    status: int,
    fragment: str,
) -> None:
    response = _post(gateway, team_key, content)
    error = _assert_openai_error(response, status)
    assert fragment in error["message"]
    row = _recorded(calls, response)
    assert row.status_code == status and row.error_type == error["type"]
    assert row.team_id is not None


def test_wrong_types_are_the_backends_400_and_recorded(
    gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    response = _post(gateway, team_key, b'{"model": "tiny", "messages": "oops"}')
    error = _assert_openai_error(response, 400)
    assert "valid list" in error["message"]
    assert _recorded(calls, response).status_code == 400


@pytest.mark.parametrize("key", [None, "wrong", "pl-0123456789.secret", "Bearer"])
def test_missing_or_bad_keys_are_401_and_recorded(
    gateway: GatewayProcess, calls: CallReader, key: str | None
) -> None:
    response = _post(gateway, key, b'{"model": "tiny", "messages": []}')
    _assert_openai_error(response, 401)
    row = _recorded(calls, response)
    assert row.status_code == 401 and row.team_id is None


def test_sdk_sees_authentication_error(gateway: GatewayProcess) -> None:
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key="nope", max_retries=0) as client:
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(
                model="tiny", messages=[{"role": "user", "content": "x"}]
            )


def test_body_over_the_limit_is_413(
    gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    huge = (
        b'{"model": "tiny", "messages": [{"role": "user", "content": "' + b"a" * (9 << 20) + b'"}]}'
    )
    response = _post(gateway, team_key, huge)
    _assert_openai_error(response, 413)
    assert _recorded(calls, response).status_code == 413


def test_context_length_errors_pass_through(client: openai.OpenAI, calls: CallReader) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.with_raw_response.create(
            model="tiny", messages=[{"role": "user", "content": "x"}], max_tokens=100_000
        )
    assert "max_model_len" in str(raised.value)
    call_id = raised.value.response.headers["x-plumbline-call-id"]
    row = calls.wait(call_id)
    assert row.status_code == 400 and row.error_type == "BadRequestError"


def test_unknown_routes_and_methods_are_openai_shaped(gateway: GatewayProcess) -> None:
    _assert_openai_error(httpx.get(f"{gateway.url}{CHAT}", timeout=10), 405)
    _assert_openai_error(httpx.get(f"{gateway.url}/v1/nothing-here", timeout=10), 404)


def test_read_api_rejects_bad_parameters(gateway: GatewayProcess, team_key: str) -> None:
    headers = {"Authorization": f"Bearer {team_key}"}
    for query in ("limit=0", "limit=abc", "since=yesterday", "cursor=%%%"):
        response = httpx.get(f"{gateway.url}/api/calls?{query}", headers=headers, timeout=10)
        _assert_openai_error(response, 400)


def test_no_bad_input_left_a_500(gateway: GatewayProcess, database: str, calls: CallReader) -> None:
    # Every call above was answered, so its record was handed over: wait until all are written.
    wait_until_sink_written(gateway.url)
    with calls.sessions() as session:
        rows = call_queries.page_of_calls(
            session, call_queries.CallFilter(team_id=None, status="500"), 500, None
        )
    assert rows == []
