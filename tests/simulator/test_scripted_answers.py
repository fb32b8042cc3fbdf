"""Scripted answers over HTTP: frequencies follow the script, logprobs show the shares."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simulator.process import SimulatorProcess

TWELVE = "The indemnity cap is 12 months of fees."
TWENTY_FOUR = "The indemnity cap is 24 months of fees."
NO_CAP = "There is no cap."
SCRIPT = {
    "name": "indemnity",
    "match": "(?i)indemnity cap",
    "answers": [
        {"text": TWELVE, "p": 0.46},
        {"text": TWENTY_FOUR, "p": 0.41},
        {"text": NO_CAP, "p": 0.13},
    ],
}
ASK = [{"role": "user", "content": "What is the indemnity cap in this contract?"}]


@pytest.fixture(scope="module")
def scripted() -> Iterator[httpx.Client]:
    config = {"scenarios": [SCRIPT], "timing": {"decode_ms_per_token": 0.0}}
    with (
        SimulatorProcess(config) as sim,
        httpx.Client(base_url=sim.base_url, timeout=60.0) as http,
    ):
        yield http


def _answers(http: httpx.Client, total: int, **params: Any) -> Counter[str]:
    counts: Counter[str] = Counter()
    per_call = 50
    for _ in range(total // per_call):
        body = {"messages": ASK, "n": per_call, **params}
        response = http.post("/v1/chat/completions", json=body)
        assert response.status_code == 200, response.text
        counts.update(choice["message"]["content"] for choice in response.json()["choices"])
    return counts


def _assert_binomial(counts: Counter[str], expected: dict[str, float]) -> None:
    total = sum(counts.values())
    assert set(counts) <= set(expected)
    for answer, p in expected.items():
        sigma = math.sqrt(p * (1 - p) / total)
        assert abs(counts[answer] / total - p) < 5 * sigma + 1e-9, (answer, counts)


def test_frequencies_match_the_script(scripted: httpx.Client) -> None:
    counts = _answers(scripted, 1000, temperature=1.0)
    _assert_binomial(counts, {TWELVE: 0.46, TWENTY_FOUR: 0.41, NO_CAP: 0.13})


def test_temperature_reweights_as_p_to_the_one_over_t(scripted: httpx.Client) -> None:
    squared = {TWELVE: 0.46**2, TWENTY_FOUR: 0.41**2, NO_CAP: 0.13**2}
    total = sum(squared.values())
    counts = _answers(scripted, 1000, temperature=0.5)
    _assert_binomial(counts, {answer: w / total for answer, w in squared.items()})


def test_top_p_drops_the_unlikely_answer(scripted: httpx.Client) -> None:
    counts = _answers(scripted, 500, temperature=1.0, top_p=0.5)
    assert NO_CAP not in counts
    _assert_binomial(counts, {TWELVE: 0.46 / 0.87, TWENTY_FOUR: 0.41 / 0.87})


def test_temperature_zero_always_gives_the_modal_answer(scripted: httpx.Client) -> None:
    for seed in range(15):
        body = {"messages": ASK, "temperature": 0, "seed": seed}
        content = scripted.post("/v1/chat/completions", json=body).json()
        assert content["choices"][0]["message"]["content"] == TWELVE
        assert content["choices"][0]["finish_reason"] == "stop"


def test_logprobs_at_the_divergent_token_are_the_answer_shares(scripted: httpx.Client) -> None:
    body = {"messages": ASK, "temperature": 0, "logprobs": True, "top_logprobs": 5}
    choice = scripted.post("/v1/chat/completions", json=body).json()["choices"][0]
    content = choice["logprobs"]["content"]
    tokens = [entry["token"] for entry in content]
    divergent = content[tokens.index(" 12")]
    top = {item["token"]: item["logprob"] for item in divergent["top_logprobs"]}
    assert math.isclose(top[" 12"], math.log(0.46), abs_tol=1e-9)
    assert math.isclose(top[" 24"], math.log(0.41), abs_tol=1e-9)
    assert len(divergent["top_logprobs"]) == 5
    single_path = content[tokens.index(" months")]
    assert math.isclose(single_path["logprob"], math.log(0.97), abs_tol=1e-9)
    assert tokens[-1] == "</s>"


def test_sampled_token_is_listed_first_even_when_unlikely(scripted: httpx.Client) -> None:
    body = {"messages": ASK, "logprobs": True, "top_logprobs": 1, "n": 50, "seed": 5}
    choices = scripted.post("/v1/chat/completions", json=body).json()["choices"]
    rare = [c for c in choices if c["message"]["content"] == NO_CAP]
    assert rare, "50 draws at p=0.13 should include the rare answer"
    first = rare[0]["logprobs"]["content"][0]
    assert first["token"] == "There"
    assert first["top_logprobs"] == [
        {"token": "There", "logprob": first["logprob"], "bytes": list(b"There")}
    ]


def test_completions_use_the_same_script(scripted: httpx.Client) -> None:
    body = {"prompt": "Q: what is the indemnity cap? A:", "temperature": 0, "max_tokens": 50}
    choice = scripted.post("/v1/completions", json=body).json()["choices"][0]
    assert choice["text"] == TWELVE
    assert choice["finish_reason"] == "stop"


def test_scenarios_can_be_replaced_at_runtime(scripted: httpx.Client) -> None:
    other = {"match": "favourite colour", "answers": [{"text": "Blue.", "p": 1}]}
    replaced = scripted.post("/_sim/scenarios", json=[other, SCRIPT])
    assert replaced.status_code == 200
    body = {"messages": [{"role": "user", "content": "Your favourite colour?"}]}
    answer = scripted.post("/v1/chat/completions", json=body).json()
    assert answer["choices"][0]["message"]["content"] == "Blue."
    listed = scripted.get("/_sim/scenarios").json()["scenarios"]
    assert [s["match"] for s in listed] == ["favourite colour", SCRIPT["match"]]
    bad = scripted.post("/_sim/scenarios", json=[{"match": "(", "answers": []}])
    assert bad.status_code == 400
    assert bad.json()["error"]["type"] == "Bad Request"


def test_unscripted_prompts_are_deterministic_pseudo_text(scripted: httpx.Client) -> None:
    body = {"messages": [{"role": "user", "content": "Say anything."}], "temperature": 0}
    first = scripted.post("/v1/chat/completions", json=body).json()["choices"][0]
    second = scripted.post("/v1/chat/completions", json=body).json()["choices"][0]
    assert first["message"]["content"] == second["message"]["content"]
    assert first["finish_reason"] == "stop"
    usage = scripted.post("/v1/chat/completions", json=body).json()["usage"]
    assert 8 <= usage["completion_tokens"] <= 49
