"""Model access under attack: every proxied kind refuses a model the key may not call, name
tricks find nothing, and a non-admin key cannot widen its own list through the admin API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from gateway.app import proxy_endpoints
from tests.security.model_access_world import CALLABLE, MESSAGES, MODELS, ModelWorld, model_world

pytestmark = pytest.mark.xdist_group("security-model-access-attacks")
HIDDEN = "beta-private-70b"  # beta's model: alpha's keys may not call it
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00"
WAV += b"\x02\x00\x10\x00data\x00\x00\x00\x00"
# Bodies each kind reads without a 400 before it looks at the model.
BODIES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions/batch": {"messages": [MESSAGES]},
    "/v1/messages": {"messages": MESSAGES, "max_tokens": 2},
    "/v1/messages/count_tokens": {"messages": MESSAGES},
    "/v1/messages/render": {"messages": MESSAGES, "max_tokens": 2},
}
GENERIC = {"messages": MESSAGES, "prompt": "hi", "input": "hi", "max_tokens": 2}


@pytest.fixture(scope="module")
def world() -> Iterator[ModelWorld]:
    with model_world() as running:
        yield running


def _others_hidden(text: str, who: str) -> None:
    """Nothing in an answer names a configured model the key may not call."""
    for model in MODELS:
        if model not in CALLABLE[who] and model != HIDDEN:
            assert model not in text, (model, text)


def _call(client: httpx.Client, path: str, model: Any) -> httpx.Response:
    if path.startswith("/v1/audio/"):
        files = {"file": ("a.wav", WAV, "audio/wav")}
        return client.post(path, data={"model": model}, files=files)
    headers = {"anthropic-version": "2023-06-01"} if path.startswith("/v1/messages") else {}
    body = {**BODIES.get(path, GENERIC), "model": model}
    return client.post(path, json=body, headers=headers)


@pytest.mark.parametrize("path", sorted(proxy_endpoints()))
def test_every_proxied_kind_refuses_a_model_the_key_may_not_call(
    world: ModelWorld, path: str
) -> None:
    with world.api("alpha") as client:
        refused = _call(client, path, HIDDEN)
    assert refused.status_code == 404, refused.text
    assert "does not exist" in refused.text and "Valid models: llama-8b," in refused.text
    _others_hidden(refused.text, "alpha")
    assert refused.headers.get("x-plumbline-call-id")  # recorded, like every call


NAME_TRICKS = [
    "BETA-PRIVATE-70B",
    "Beta-Private-70b",
    f" {HIDDEN}",
    f"{HIDDEN} ",
    f"{HIDDEN}\n",
    f"{HIDDEN}\t",
    f"{HIDDEN}\u200b",
    f"{HIDDEN}\x00",
    f"../{HIDDEN}",
    f"./{HIDDEN}",
    f"alpha/../{HIDDEN}",
    f"{HIDDEN}/",
    f"llama-8b/../{HIDDEN}",
    f"{HIDDEN}%00",
    "*",
    "beta-private-*",
    "[b]eta-private-70b",
    "llama-8b*",  # alpha's own pattern, sent as a name: names are never patterns
    HIDDEN * 2000,
]


@pytest.mark.parametrize("name", NAME_TRICKS, ids=lambda n: repr(n[:24]))
def test_model_name_tricks_find_nothing(world: ModelWorld, name: str) -> None:
    refused = world.chat("alpha", name)
    assert refused.status_code == 404, refused.text
    error = refused.json()["error"]
    assert error["message"].startswith(f"The model `{name[:200]}` does not exist.")
    assert error["message"].endswith("Valid models: llama-8b, llama-8b-instruct, qwen-7b.")
    assert len(error["message"]) < 400  # a long name is cut, not echoed whole
    _others_hidden(refused.text, "alpha")


@pytest.mark.parametrize("model", [[HIDDEN], {"$eq": HIDDEN}, 7, None, ""])
def test_a_model_that_is_not_a_name_is_a_400(world: ModelWorld, model: Any) -> None:
    with world.api("alpha") as client:
        refused = client.post("/v1/chat/completions", json={"model": model, "messages": MESSAGES})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "model"
    _others_hidden(refused.text, "alpha")


def test_a_non_admin_key_cannot_widen_any_list(world: ModelWorld) -> None:
    prefix = world.keys["alpha_qwen"][3:13]
    widen = {"allowed_models": ["*"]}
    with world.api("alpha_qwen") as client:
        attempts = [
            client.patch("/api/admin/teams/alpha", json=widen),
            client.patch(f"/api/admin/keys/{prefix}", json=widen),
            client.post("/api/admin/keys", json={"team": "alpha", **widen}),
            client.post("/api/admin/keys", json={"team": "beta", **widen}),
        ]
    for attempt in attempts:
        assert attempt.status_code == 403, attempt.text
    assert world.chat("alpha_qwen", "llama-8b").status_code == 404
    with world.api() as admin:
        teams = {t["name"]: t for t in admin.get("/api/admin/teams").json()["data"]}
        keys = {k["prefix"]: k for k in admin.get("/api/admin/keys").json()["data"]}
    assert teams["alpha"]["allowed_models"] == ["llama-8b*", "qwen-7b"]
    assert keys[prefix]["allowed_models"] == ["qwen-*"]


BAD_LISTS: list[tuple[Any, str]] = [
    ("llama-*", "allowed_models"),
    (["x"] * 65, "allowed_models"),
    (["x" * 129], "allowed_models"),
    (["llama 8b"], "no spaces"),
    (["llama-8b\n"], "no spaces"),
    ([""], "non-empty"),
    ([1], "allowed_models"),
    ([["nested"]], "allowed_models"),
    ({"*": True}, "allowed_models"),
]


@pytest.mark.parametrize(("value", "says"), BAD_LISTS, ids=lambda v: repr(v)[:20])
def test_bad_lists_are_clear_400s_on_every_route(world: ModelWorld, value: Any, says: str) -> None:
    prefix = world.keys["alpha_qwen"][3:13]
    with world.api() as admin:
        answers = [
            admin.patch("/api/admin/teams/alpha", json={"allowed_models": value}),
            admin.patch(f"/api/admin/keys/{prefix}", json={"allowed_models": value}),
            admin.post("/api/admin/keys", json={"team": "alpha", "allowed_models": value}),
        ]
    for answer in answers:
        assert answer.status_code == 400, answer.text
        assert set(answer.json()["error"]) == {"message", "type", "param", "code"}
        assert says in answer.json()["error"]["message"] + str(answer.json()["error"]["param"])
    assert world.chat("alpha_qwen", "qwen-7b").status_code == 200  # nothing changed


def test_an_admin_key_takes_no_list_and_the_bounds_themselves_are_accepted(
    world: ModelWorld,
) -> None:
    with world.api() as admin:
        refused = admin.post(
            "/api/admin/keys", json={"team": "ops", "admin": True, "allowed_models": ["x"]}
        )
        assert refused.status_code == 400 and "Admin keys call every model" in refused.text
        widest = [f"{i:03d}" + "x" * 125 for i in range(64)]
        created = admin.post("/api/admin/keys", json={"team": "ops", "allowed_models": widest})
    assert created.status_code == 201, created.text
    world.keys["ops"] = created.json()["key"]
    refused_call = world.chat("ops", "llama-8b")
    assert refused_call.status_code == 404
    assert refused_call.json()["error"]["message"].endswith("Valid models: none for this key.")
