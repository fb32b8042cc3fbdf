"""A team key cannot label its calls as the gateway's eval or live-sample traffic."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.security.stack import SecurityStack, security_stack
from tests.support.calls import CallReader

pytestmark = pytest.mark.xdist_group("security-traffic-labels")
BODY = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SecurityStack, CallReader]]:
    with security_stack("sqlite", tmp_path_factory.mktemp("labels")) as running:
        reader = CallReader(running.database_url)
        yield running, reader
        reader.close()


@pytest.mark.parametrize("feature", ["eval:nightly", "resample:chat", "resample:"])
def test_a_team_key_cannot_send_reserved_features(
    world: tuple[SecurityStack, CallReader], feature: str
) -> None:
    stack, calls = world
    with stack.api("alpha") as client:
        response = client.post(
            "/v1/chat/completions", json=BODY, headers={"X-Plumbline-Feature": feature}
        )
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["param"] == "X-Plumbline-Feature" and "admin key" in error["message"]
    row = calls.wait(response.headers["x-plumbline-call-id"])
    assert row.status_code == 403 and row.team_id is not None
    assert row.source == "product" and row.completion_tokens is None


@pytest.mark.parametrize(
    ("feature", "source"), [("eval:nightly", "eval"), ("resample:chat", "live_sample")]
)
def test_an_admin_key_labels_the_gateways_own_traffic(
    world: tuple[SecurityStack, CallReader], feature: str, source: str
) -> None:
    stack, calls = world
    headers = {"X-Plumbline-Feature": feature, "X-Plumbline-Team": "alpha"}
    with stack.api("admin") as client:
        response = client.post("/v1/chat/completions", json=BODY, headers=headers)
    assert response.status_code == 200, response.text
    assert calls.wait(response.headers["x-plumbline-call-id"]).source == source


def test_ordinary_features_still_pass(world: tuple[SecurityStack, CallReader]) -> None:
    stack, calls = world
    with stack.api("beta") as client:
        headers = {"X-Plumbline-Feature": "chat-eval:x"}
        response = client.post("/v1/chat/completions", json=BODY, headers=headers)
    assert response.status_code == 200
    assert calls.wait(response.headers["x-plumbline-call-id"]).source == "product"
