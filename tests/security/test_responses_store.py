"""Stored responses are their team's: another team (or a guess) cannot read, cancel or chain one.

Both stacks run a backend that keeps responses (vLLM's VLLM_ENABLE_RESPONSES_API_STORE=1): the
riskier server. On `stored` the model has `responses_store: true`, so the gateway records each
response's owner; on `unstored` it does not, so nothing is stored upstream at all.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.security.stack import SecurityStack, security_stack
from tests.support.calls import CallReader

PATH = "/v1/responses"
BASE: dict[str, Any] = {"model": "tiny", "input": "What is the indemnity cap?", "temperature": 0}
STORE_ON = {"enable_responses_store": True}


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    """The gateway records owners (`responses_store: true`)."""
    with security_stack(
        "postgres",
        tmp_path_factory.mktemp("security"),
        simulator_options=STORE_ON,
        model_options={"responses_store": True},
    ) as running:
        yield running


@pytest.fixture(scope="module")
def unstored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    """The model has no `responses_store`: the gateway stores nothing upstream."""
    with security_stack(
        "postgres", tmp_path_factory.mktemp("security"), simulator_options=STORE_ON
    ) as running:
        yield running


def _unknown(stack: SecurityStack, response_id: str) -> bytes:
    """What the backend itself answers for an id it does not hold, named `response_id`."""
    never = f"resp_{secrets.token_hex(16)}"
    answer = httpx.get(f"{stack.backend_url}{PATH}/{never}")
    assert answer.status_code == 404
    return answer.content.replace(never.encode(), response_id.encode())


def _attempts(client: httpx.Client, rid: str) -> list[httpx.Response]:
    """Every way a call could reach a stored response by its id."""
    return [
        client.get(f"{PATH}/{rid}"),
        client.get(f"{PATH}/{rid}", params={"stream": "true", "starting_after": "0"}),
        client.post(f"{PATH}/{rid}/cancel"),
        client.post(PATH, json={**BASE, "previous_response_id": rid}),
        client.post(PATH, json={**BASE, "previous_response_id": rid, "store": False}),
    ]


def test_another_team_gets_the_404_of_an_unknown_id(stored: SecurityStack) -> None:
    with stored.api("alpha") as alpha:
        plain = alpha.post(PATH, json={**BASE, "max_output_tokens": 6}).json()["id"]
        background = alpha.post(
            PATH, json={**BASE, "max_output_tokens": 200, "background": True}
        ).json()["id"]
    reader = CallReader(stored.database_url)
    try:
        with stored.api("beta") as beta:
            for rid in (plain, background):
                for response in _attempts(beta, rid):
                    # Byte for byte what vLLM says of an id it never saw: nothing tells it exists.
                    assert response.status_code == 404, response.text
                    assert response.content == _unknown(stored, rid)
                    call = reader.wait(response.headers["x-plumbline-call-id"])
                    assert (call.status_code, call.backend) == (404, None)
            endpoints = {
                reader.wait(r.headers["x-plumbline-call-id"]).endpoint
                for r in _attempts(beta, plain)
            }
    finally:
        reader.close()
    assert endpoints == {f"{PATH}/{{response_id}}", f"{PATH}/{{response_id}}/cancel", PATH}
    with stored.api("alpha") as alpha:
        # Beta's cancel reached nothing: alpha's background response still runs or finished.
        assert alpha.get(f"{PATH}/{background}").json()["status"] != "cancelled"
        assert alpha.get(f"{PATH}/{plain}").status_code == 200


def test_guessed_and_directly_stored_ids_are_not_found(stored: SecurityStack) -> None:
    # Stored on the backend by a client that went to vLLM directly: no owner, so nobody's.
    direct = httpx.post(
        f"{stored.backend_url}{PATH}", json={**BASE, "max_output_tokens": 6, "store": True}
    ).json()["id"]
    assert httpx.get(f"{stored.backend_url}{PATH}/{direct}").status_code == 200
    guesses = [
        direct,
        f"resp_{secrets.token_hex(16)}",
        f"resp_{secrets.token_hex(8)}",
        "x" * 5000,
    ]
    with stored.api("alpha") as alpha:
        for rid in guesses:
            for response in _attempts(alpha, rid)[:3]:
                assert response.status_code == 404, response.text
                assert response.json()["error"]["param"] == "response_id"
        assert alpha.get(f"{PATH}/%2e%2e%2fhealth").status_code == 404
        assert alpha.get(f"{PATH}/a/b").status_code == 404


def test_admin_keys_reach_only_the_team_they_act_for(stored: SecurityStack) -> None:
    with stored.api("alpha") as alpha:
        rid = alpha.post(PATH, json={**BASE, "max_output_tokens": 6}).json()["id"]
    with stored.api("admin") as admin:
        # An admin key's own team owns nothing of alpha's: no reading every team's responses.
        assert admin.get(f"{PATH}/{rid}").status_code == 404
        acting = admin.get(f"{PATH}/{rid}", headers={"X-Plumbline-Team": "alpha"})
        assert acting.status_code == 200 and acting.json()["id"] == rid
    with stored.api("beta") as beta:
        refused = beta.get(f"{PATH}/{rid}", headers={"X-Plumbline-Team": "alpha"})
        assert refused.status_code == 403


def test_retrieves_need_a_key_and_a_query_vllm_reads(stored: SecurityStack) -> None:
    with stored.api(None) as anonymous:
        assert anonymous.get(f"{PATH}/resp_{secrets.token_hex(16)}").status_code == 401
    with stored.api("alpha") as alpha:
        rid = alpha.post(PATH, json={**BASE, "max_output_tokens": 6}).json()["id"]
        bad = alpha.get(f"{PATH}/{rid}", params={"stream": "maybe"})
        assert bad.status_code == 400 and bad.json()["error"]["param"] == "stream"
        huge = alpha.get(f"{PATH}/{rid}", params={"starting_after": "1" * 400})
        assert huge.status_code == 400, huge.text
        body = alpha.post(f"{PATH}/{rid}/cancel", content=b"x" * (9 << 20))
        assert body.status_code == 413
    reader = CallReader(stored.database_url)
    try:
        for response in (bad, huge, body):
            call = reader.wait(response.headers["x-plumbline-call-id"])
            assert (call.status_code, call.backend) == (response.status_code, None)
    finally:
        reader.close()


def test_without_the_flag_nothing_is_stored_upstream(unstored: SecurityStack) -> None:
    # The SDK's default is `store: true`; the backend would then serve it to anyone with the id.
    with unstored.openai("alpha") as alpha:
        created = alpha.responses.create(model="tiny", input="Hello", max_output_tokens=6)
    assert httpx.get(f"{unstored.backend_url}{PATH}/{created.id}").status_code == 404
    with unstored.api("alpha") as alpha:
        assert alpha.get(f"{PATH}/{created.id}").status_code == 404
        chained = alpha.post(PATH, json={**BASE, "previous_response_id": created.id})
        background = alpha.post(PATH, json={**BASE, "background": True, "stream": True})
    for response, field in ((chained, "previous_response_id"), (background, "background")):
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["param"] == field and "responses_store: true" in error["message"]
    reader = CallReader(unstored.database_url)
    try:
        for response in (chained, background):
            call = reader.wait(response.headers["x-plumbline-call-id"])
            assert (call.status_code, call.backend, call.endpoint) == (400, None, PATH)
    finally:
        reader.close()


def test_media_in_input_is_held_to_the_models_domains(stored: SecurityStack) -> None:
    image = {"type": "input_image", "image_url": "http://169.254.169.254/latest/meta-data"}
    with stored.api("alpha") as alpha:
        response = alpha.post(PATH, json={**BASE, "input": [{"role": "user", "content": [image]}]})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "input[0].content[0].image_url"


@pytest.mark.parametrize("item_type", ["function_call_output", "custom_tool_call_output"])
def test_media_in_a_tool_output_is_held_to_the_models_domains(
    stored: SecurityStack, item_type: str
) -> None:
    # vLLM renders a tool output's `output` parts as a tool message's content, images too.
    image = {"type": "input_image", "image_url": "http://169.254.169.254/latest/meta-data"}
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    output = {"type": item_type, "call_id": "c1", "output": [image]}
    with stored.api("alpha") as alpha:
        response = alpha.post(PATH, json={**BASE, "input": [call, output]})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "input[1].output[0].image_url"
