"""Eval routes hold a key to its own model list: the workers call as the team, whose list may
be wider, so a suite, run or paraphrase model outside the key's list is refused up front."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy.orm import Session

from evals.runs.creation import create_run
from plumbline.db import create_db_engine
from tests.security.model_access_world import ModelWorld, model_world

pytestmark = pytest.mark.xdist_group("security-model-access-evals")
KEY = "alpha_exact"  # team alpha may call llama-8b* and qwen-7b; this key only llama-8b
WIDER = "qwen-7b"


def _suite(name: str, model: str) -> str:
    return f"""\
name: {name}
team: alpha
model: {model}
sampling: {{temperature: 1.0, max_tokens: 8, seed_policy: per_sample, seed: 3}}
paraphrases_per_question: 1
samples_per_paraphrase: 2
threshold: 0.9
questions:
  - id: "q1"
    text: What is the governing law?
    answer: {{type: regex, pattern: "(.*)", normalize: false}}
    expected: "x"
"""


def _import(client: httpx.Client, name: str, model: str) -> httpx.Response:
    headers = {"Content-Type": "application/yaml"}
    return client.post("/api/evals/suites", content=_suite(name, model), headers=headers)


def _refused(response: httpx.Response) -> None:
    assert response.status_code == 404, response.text
    error = response.json()["error"]
    assert error["param"] == "model" and "does not exist" in error["message"]
    assert "Valid models: llama-8b." in error["message"]  # the key's own list, nothing more


def _run_count(world: ModelWorld) -> int:
    with world.api() as admin:
        listed = admin.get("/api/evals/runs", params={"team": "alpha"})
    assert listed.status_code == 200, listed.text
    return len(listed.json()["data"])


@pytest.fixture(scope="module")
def world() -> Iterator[ModelWorld]:
    with model_world() as running:
        with running.api() as admin:
            assert _import(admin, "wide", WIDER).status_code == 201
        yield running


def test_a_suite_on_a_model_outside_the_keys_list_is_not_imported(world: ModelWorld) -> None:
    with world.api(KEY) as client:
        _refused(_import(client, "sneaky", WIDER))
        assert _import(client, "allowed", "llama-8b").status_code == 201
    with world.api() as admin:
        names = {s["name"] for s in admin.get("/api/evals/suites").json()["data"]}
    assert "sneaky" not in names and "allowed" in names


def _suite_id(world: ModelWorld, name: str) -> int:
    with world.api() as admin:
        suites = admin.get("/api/evals/suites").json()["data"]
    return int(next(s["id"] for s in suites if s["name"] == name))


def test_a_run_of_a_suite_on_a_wider_model_is_not_started(world: ModelWorld) -> None:
    wide = _suite_id(world, "wide")
    before = _run_count(world)
    with world.api(KEY) as client:
        _refused(client.post(f"/api/evals/suites/{wide}/runs"))
    assert _run_count(world) == before
    with world.api("alpha") as team_key:  # a key the team's whole list applies to gets past it
        passed = team_key.post(f"/api/evals/suites/{wide}/runs")
    # This gateway has no eval key, so it says so: the model check did not stop the call.
    assert passed.status_code == 503 and passed.json()["error"]["param"] == "eval.api_key"


def test_a_run_on_a_wider_model_is_not_resumed(world: ModelWorld) -> None:
    engine = create_db_engine(world.database_url)
    try:
        with Session(engine) as session, session.begin():
            run_id = create_run(session, _suite_id(world, "wide"), team_id=None).run_id
    finally:
        engine.dispose()
    with world.api(KEY) as client:
        _refused(client.post(f"/api/evals/runs/{run_id}/resume"))
        assert client.get(f"/api/evals/runs/{run_id}").status_code == 200  # its team may read


def test_paraphrases_are_not_generated_by_a_wider_model(world: ModelWorld) -> None:
    with world.api(KEY) as client:
        suites = client.get("/api/evals/suites").json()["data"]
        allowed = next(s["id"] for s in suites if s["name"] == "allowed")
        generate = f"/api/evals/suites/{allowed}/paraphrases/generate"
        _refused(client.post(generate, json={"n": 1, "model": WIDER}))
