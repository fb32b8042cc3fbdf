"""Model access through a real gateway: each key calls exactly what its team's and its own
lists allow, refusals read as unknown models, are recorded, and policy changes apply live."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from sqlalchemy import text

from plumbline.db import create_db_engine
from tests.security.invalidation_world import APPLIED, cli, metric
from tests.security.model_access_world import CALLABLE, MESSAGES, MODELS, ModelWorld, model_world
from tests.support.waiting import wait_for, wait_until

pytestmark = pytest.mark.xdist_group("security-model-access")


@pytest.fixture(scope="module")
def world() -> Iterator[ModelWorld]:
    with model_world() as running:
        yield running


def _refusal(model: str, callable_models: list[str]) -> str:
    valid = ", ".join(callable_models) or "none for this key"
    return f"The model `{model}` does not exist. Valid models: {valid}."


@pytest.mark.parametrize("who", sorted(CALLABLE))
def test_each_key_calls_exactly_the_models_both_lists_allow(world: ModelWorld, who: str) -> None:
    client = world.openai(who)
    for model in MODELS:
        if model in CALLABLE[who]:
            reply = client.chat.completions.create(model=model, messages=MESSAGES, max_tokens=2)
            assert reply.choices[0].message.content is not None
            continue
        with pytest.raises(openai.NotFoundError) as refused:
            client.chat.completions.create(model=model, messages=MESSAGES, max_tokens=2)
        assert refused.value.body == {
            "message": _refusal(model, CALLABLE[who]),
            "type": "NotFoundError",
            "param": "model",
            "code": 404,
        }


@pytest.mark.parametrize("who", sorted(CALLABLE))
def test_v1_models_lists_only_what_the_key_may_call(world: ModelWorld, who: str) -> None:
    listed = [model.id for model in world.openai(who).models.list()]
    assert listed == CALLABLE[who]


def test_a_refusal_names_no_other_teams_model_and_reads_as_an_unknown_one(
    world: ModelWorld,
) -> None:
    hidden = world.chat("alpha", "beta-private-70b")
    unknown = world.chat("alpha", "no-such-model")
    assert hidden.status_code == unknown.status_code == 404
    assert hidden.json()["error"]["message"] == _refusal("beta-private-70b", CALLABLE["alpha"])
    assert unknown.json()["error"]["message"] == _refusal("no-such-model", CALLABLE["alpha"])
    for other in ("beta-private-70b", "gamma-secret-1"):
        assert other not in unknown.text
    assert "gamma-secret-1" not in hidden.text
    # A key's own list may name another team's model: still nothing is shown of it.
    disjoint = world.chat("alpha_disjoint", "beta-private-70b")
    assert disjoint.json()["error"]["message"] == _refusal("beta-private-70b", [])
    assert "beta-private-70b" not in world.chat("alpha_disjoint", "llama-8b").text


def test_a_refused_call_is_recorded_with_the_model_it_asked_for(world: ModelWorld) -> None:
    refused = world.chat("alpha_qwen", "llama-8b", **{"X-Plumbline-Feature": "chat"})
    assert refused.status_code == 404
    call_id = refused.headers["x-plumbline-call-id"]
    engine = create_db_engine(world.database_url)
    query = text(
        "SELECT status_code, error_type, model, endpoint, team_id, key_id, feature "
        "FROM calls WHERE id = :id"
    )

    def row() -> object:
        with engine.connect() as connection:
            return connection.execute(query, {"id": call_id}).first()

    try:
        found = wait_for(row, timeout=30, what="the refused call recorded")
    finally:
        engine.dispose()
    status, error_type, model, endpoint, team_id, key_id, feature = found  # type: ignore[misc]
    assert (status, error_type, model) == (404, "NotFoundError", "llama-8b")
    assert endpoint == "/v1/chat/completions" and feature == "chat"
    assert team_id is not None and key_id is not None


def test_an_admin_acting_for_a_team_gets_that_teams_models(world: ModelWorld) -> None:
    acting = {"X-Plumbline-Team": "beta"}
    assert world.chat("admin", "beta-private-70b", **acting).status_code == 200
    refused = world.chat("admin", "qwen-7b", **acting)
    assert refused.status_code == 404
    assert refused.json()["error"]["message"] == _refusal("qwen-7b", CALLABLE["beta"])
    assert world.chat("admin", "qwen-7b").status_code == 200  # for itself: every model


def test_a_rotated_key_keeps_its_list(world: ModelWorld) -> None:
    with world.api() as admin:
        created = admin.post(
            "/api/admin/keys", json={"team": "alpha", "allowed_models": ["qwen-7b"]}
        ).json()
        rotated = admin.post(f"/api/admin/keys/{created['prefix']}/rotate").json()
        listed = {k["prefix"]: k for k in admin.get("/api/admin/keys").json()["data"]}
    assert listed[rotated["prefix"]]["allowed_models"] == ["qwen-7b"]
    world.keys["rotated"] = rotated["key"]
    assert world.chat("rotated", "llama-8b").status_code == 404
    assert world.chat("rotated", "qwen-7b").status_code == 200


def test_a_team_list_changed_with_the_cli_applies_on_the_running_gateway(
    world: ModelWorld,
) -> None:
    with world.api() as admin:
        key = admin.post("/api/admin/keys", json={"team": "delta"}).json()["key"]
    world.keys["delta"] = key
    assert world.chat("delta", "gamma-secret-1").status_code == 200  # cached for 600 s
    before = metric(world.gateway, APPLIED)
    narrowed = cli(world.database_url, world.env, "teams", "set", "delta", "--models", "qwen-*")
    assert narrowed.returncode == 0, narrowed.stderr
    wait_until(lambda: metric(world.gateway, APPLIED) > before, timeout=30, what="applied")
    assert world.chat("delta", "gamma-secret-1").status_code == 404
    assert [m.id for m in world.openai("delta").models.list()] == ["qwen-7b"]
    before = metric(world.gateway, APPLIED)
    widened = cli(world.database_url, world.env, "teams", "set", "delta", "--all-models")
    assert widened.returncode == 0, widened.stderr
    wait_until(lambda: metric(world.gateway, APPLIED) > before, timeout=30, what="applied")
    assert world.chat("delta", "gamma-secret-1").status_code == 200


def test_a_key_list_changed_through_the_api_applies_at_once(world: ModelWorld) -> None:
    with world.api() as admin:
        created = admin.post("/api/admin/keys", json={"team": "gamma"}).json()
        world.keys["gamma_live"] = created["key"]
        assert world.chat("gamma_live", "llama-8b").status_code == 200
        changed = admin.patch(
            f"/api/admin/keys/{created['prefix']}", json={"allowed_models": ["gamma-*"]}
        )
        assert changed.status_code == 200 and changed.json()["allowed_models"] == ["gamma-*"]
        assert world.chat("gamma_live", "llama-8b").status_code == 404
        assert world.chat("gamma_live", "gamma-secret-1").status_code == 200
        audit = admin.get("/api/admin/audit", params={"action": "key.limits"}).json()["data"]
    assert audit[0]["details"] == {"allowed_models": ["gamma-*"]}


def test_a_stored_response_of_a_model_the_key_lost_reads_as_unknown(world: ModelWorld) -> None:
    with world.api() as admin:
        created = admin.post("/api/admin/keys", json={"team": "gamma"}).json()
    world.keys["gamma_store"] = created["key"]
    client = world.openai("gamma_store")
    response = client.responses.create(model="llama-8b", input="Hello", max_output_tokens=4)
    assert client.responses.retrieve(response.id).id == response.id
    with world.api() as admin:
        narrowed = {"allowed_models": ["qwen-*"]}
        assert admin.patch(f"/api/admin/keys/{created['prefix']}", json=narrowed).is_success
    with world.api("gamma_store") as api:
        lost = api.get(f"/v1/responses/{response.id}")
        unknown = api.get("/v1/responses/resp_0123456789abcdef")
        cancel = api.post(f"/v1/responses/{response.id}/cancel")
    assert lost.status_code == unknown.status_code == cancel.status_code == 404
    assert lost.json() == {
        "error": {
            "message": f"Response with id '{response.id}' not found.",
            "type": "invalid_request_error",
            "param": "response_id",
            "code": 404,
        }
    }
    assert unknown.json()["error"]["message"].endswith("not found.")
    assert lost.headers["x-plumbline-call-id"]
