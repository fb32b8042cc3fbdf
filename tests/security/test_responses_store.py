"""Another team's stored response: never stored upstream, never read, cancelled or chained."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.security.stack import SecurityStack, security_stack
from tests.support.calls import CallReader

PATH = "/v1/responses"
BASE: dict[str, Any] = {"model": "tiny", "input": "What is the indemnity cap?", "temperature": 0}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    """The backend keeps responses (vLLM's VLLM_ENABLE_RESPONSES_API_STORE=1): the riskier one."""
    with security_stack(
        "postgres",
        tmp_path_factory.mktemp("security"),
        simulator_options={"enable_responses_store": True},
    ) as running:
        yield running


def test_responses_are_not_stored_upstream(stack: SecurityStack) -> None:
    # The SDK's default is `store: true`; the backend would then serve it to anyone with the id.
    with stack.openai("alpha") as alpha:
        created = alpha.responses.create(model="tiny", input="Hello", max_output_tokens=6)
    assert httpx.get(f"{stack.backend_url}{PATH}/{created.id}").status_code == 404


def test_another_teams_response_cannot_be_read_cancelled_or_chained(stack: SecurityStack) -> None:
    with stack.openai("alpha") as alpha:
        through_gateway = alpha.responses.create(model="tiny", input="Hi", max_output_tokens=6)
    # One stored on the backend by a client that went to vLLM directly.
    direct = httpx.post(
        f"{stack.backend_url}{PATH}", json={**BASE, "max_output_tokens": 6, "store": True}
    )
    stored_id = direct.json()["id"]
    assert httpx.get(f"{stack.backend_url}{PATH}/{stored_id}").status_code == 200
    with stack.api("beta") as beta:
        for rid in (through_gateway.id, stored_id):
            assert beta.get(f"{PATH}/{rid}").status_code == 404
            assert beta.get(f"{PATH}/{rid}", params={"stream": "true"}).status_code == 404
            assert beta.post(f"{PATH}/{rid}/cancel").status_code == 404
            chained = beta.post(PATH, json={**BASE, "previous_response_id": rid})
            assert chained.status_code == 400, chained.text
            assert chained.json()["error"]["param"] == "previous_response_id"
        background = beta.post(PATH, json={**BASE, "background": True, "stream": True})
        assert background.status_code == 400
        assert background.json()["error"]["param"] == "background"
    # Refused before any backend, and recorded.
    reader = CallReader(stack.database_url)
    try:
        for response in (chained, background):
            call = reader.wait(response.headers["x-plumbline-call-id"])
            assert (call.status_code, call.backend, call.endpoint) == (400, None, PATH)
    finally:
        reader.close()


def test_media_in_input_is_held_to_the_models_domains(stack: SecurityStack) -> None:
    image = {"type": "input_image", "image_url": "http://169.254.169.254/latest/meta-data"}
    with stack.api("alpha") as alpha:
        response = alpha.post(PATH, json={**BASE, "input": [{"role": "user", "content": [image]}]})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "input[0].content[0].image_url"
