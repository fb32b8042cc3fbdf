"""What a recorded call adds to each GenAI histogram, under both conventions versions."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.metering.record import CallRecord
from gateway.otlp_metrics.instruments import (
    OPERATION_DURATION,
    TIME_PER_OUTPUT_TOKEN,
    TIME_TO_FIRST_TOKEN,
    TOKEN_USAGE,
)
from gateway.otlp_metrics.measurements import Measurement, call_measurements
from gateway.recording.rows import call_row
from tests.support.records import make_record


def _measure(record: CallRecord, latest: bool = False) -> tuple[dict[str, Any], list[Measurement]]:
    row, _ = call_row(record)
    return row, call_measurements(record, row, latest=latest)


def _by_name(measured: list[Measurement]) -> dict[str, list[tuple[dict[str, Any], float]]]:
    found: dict[str, list[tuple[dict[str, Any], float]]] = {}
    for instrument, attributes, value in measured:
        found.setdefault(instrument.name, []).append((dict(attributes), value))
    return found


def test_a_streamed_chat_call_counts_in_all_four_with_the_row_figures() -> None:
    record = make_record(tokens=11, backend="http://10.0.0.7:8000")
    row, measured = _measure(record)
    found = _by_name(measured)
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "vllm",
        "gen_ai.request.model": "tiny",
        "server.address": "10.0.0.7",
        "server.port": 8000,
        "plumbline.team": "team-a",
    }
    assert found[OPERATION_DURATION.name] == [(common, row["e2e_ms"] / 1000)]
    assert found[TOKEN_USAGE.name] == [
        (common | {"gen_ai.token.type": "input"}, 30.0),
        (common | {"gen_ai.token.type": "output"}, 11.0),
    ]
    assert found[TIME_TO_FIRST_TOKEN.name] == [(common, row["ttft_ms"] / 1000)]
    # The conventions: (duration - time to first token) / (output tokens - 1).
    per_token = (row["e2e_ms"] - row["ttft_ms"]) / 1000 / 10
    assert found[TIME_PER_OUTPUT_TOKEN.name] == [(common, pytest.approx(per_token))]


def test_the_latest_conventions_name_the_provider() -> None:
    _, measured = _measure(make_record(tokens=3), latest=True)
    for _, attributes, _ in measured:
        names = dict(attributes)
        assert names["gen_ai.provider.name"] == "vllm" and "gen_ai.system" not in names


def test_a_failed_call_counts_its_duration_with_error_type_and_no_token_timings() -> None:
    record = make_record(
        tokens=0,
        status_code=503,
        error_type="ServiceUnavailableError",
        usage=None,
        token_chunk_times=[],
    )
    _, measured = _measure(record)
    found = _by_name(measured)
    assert set(found) == {OPERATION_DURATION.name}
    [(attributes, _)] = found[OPERATION_DURATION.name]
    assert attributes["error.type"] == "ServiceUnavailableError"


@pytest.mark.parametrize(
    ("error_type", "status", "expected"),
    [
        ("ClientClosedRequest", 499, "ClientClosedRequest"),
        ("RateLimitError", 429, "RateLimitError"),
        ("SomethingTheBackendMadeUp", 500, "500"),
    ],
)
def test_error_types_stay_a_small_set(error_type: str, status: int, expected: str) -> None:
    record = make_record(tokens=2, status_code=status, error_type=error_type)
    _, measured = _measure(record)
    [duration] = [dict(a) for i, a, _ in measured if i is OPERATION_DURATION]
    assert duration["error.type"] == expected


def test_a_cancelled_call_is_a_failure() -> None:
    _, measured = _measure(make_record(tokens=4, cancelled=True))
    names = {instrument.name for instrument, _, _ in measured}
    assert TIME_TO_FIRST_TOKEN.name not in names
    assert TIME_PER_OUTPUT_TOKEN.name not in names
    [duration] = [dict(a) for i, a, _ in measured if i is OPERATION_DURATION]
    assert duration["error.type"] == "_OTHER"


def test_embeddings_count_input_tokens_only() -> None:
    record = make_record(
        tokens=0,
        endpoint="/v1/embeddings",
        stream=False,
        token_chunk_times=[],
        usage={"prompt_tokens": 12, "total_tokens": 12},
    )
    _, measured = _measure(record)
    found = _by_name(measured)
    assert set(found) == {OPERATION_DURATION.name, TOKEN_USAGE.name}
    [(attributes, value)] = found[TOKEN_USAGE.name]
    assert attributes["gen_ai.operation.name"] == "embeddings"
    assert attributes["gen_ai.token.type"] == "input" and value == 12.0


def test_a_plain_completion_has_no_first_token_time() -> None:
    record = make_record(tokens=0, endpoint="/v1/completions", stream=False, token_chunk_times=[])
    found = _by_name(_measure(record)[1])
    assert set(found) == {OPERATION_DURATION.name, TOKEN_USAGE.name}
    assert found[TOKEN_USAGE.name][0][0]["gen_ai.operation.name"] == "text_completion"


@pytest.mark.parametrize("endpoint", ["/v1/rerank", "/tokenize", "/v1/audio/transcriptions"])
def test_routes_that_are_not_inference_operations_are_not_measured(endpoint: str) -> None:
    assert _measure(make_record(tokens=2, endpoint=endpoint))[1] == []


def test_a_model_name_that_reached_no_backend_is_left_out() -> None:
    # A client names any model it likes: only a routed call's model is a configured one.
    record = make_record(
        tokens=0,
        model="x" * 200,
        backend=None,
        status_code=404,
        error_type="NotFoundError",
        usage=None,
        token_chunk_times=[],
    )
    [(instrument, attributes, _)] = _measure(record)[1]
    names = dict(attributes)
    assert instrument is OPERATION_DURATION
    assert "gen_ai.request.model" not in names and "server.address" not in names
    assert names["error.type"] == "NotFoundError"


def test_the_response_model_is_taken_from_the_row_when_it_has_one() -> None:
    record = make_record(tokens=2)
    row, _ = call_row(record)
    row["response_model"] = "tiny-2026-01"
    for _, attributes, _ in call_measurements(record, row):
        assert dict(attributes)["gen_ai.response.model"] == "tiny-2026-01"
