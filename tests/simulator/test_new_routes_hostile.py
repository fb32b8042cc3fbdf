"""Hostile bodies on the routes beyond chat: a JSON answer (4xx unless the body was usable
after all, as vLLM ignores unknown fields), never a 5xx or a dropped connection."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from simulator.process import SimulatorProcess
from tests.simulator.conftest import CAPTURE_LIKE

GENERATE_PATHS = ("/v1/responses", "/v1/messages", "/v1/messages/count_tokens")
POOLING_PATHS = ("/v1/embeddings", "/pooling", "/score", "/rerank", "/v2/rerank")
AUDIO_PATHS = ("/v1/audio/transcriptions", "/v1/audio/translations")
BODIES = (
    b"",
    b"{",
    b"[]",
    b"null",
    b'"text"',
    b"\xff\xfe",
    b'{"model": 5}',
    b'{"model": "tiny", "input": {"a": 1}, "messages": "x", "max_tokens": "many"}',
    b'{"model": "tiny", "input": [{"role": 1}], "messages": [{"role": "user"}], "max_tokens": -1}',
    b'{"model": "tiny", "input": [[1, "a"]], "query": 3, "documents": [null], "top_n": -2}',
    b'{"model": "tiny", "input": "hi", "max_output_tokens": -5, "top_logprobs": -1}',
    b'{"model": "tiny", "input": "hi", "temperature": 9, "include": "everything"}',
    b'{"model": "tiny", "messages": [{"role": "user", "content": [{"type": "image"}]}], '
    b'"max_tokens": 3, "system": [{"type": "nope"}]}',
    b'{"model": "tiny", "text_1": [], "text_2": ["a"], "input": [99999999]}',
)


@pytest.fixture(scope="module")
def generate_http() -> Iterator[httpx.Client]:
    """A generate simulator with the store on and a speech model."""
    config = {**CAPTURE_LIKE, "enable_responses_store": True, "transcription": True}
    with SimulatorProcess(config) as sim, httpx.Client(base_url=sim.base_url, timeout=30) as http:
        yield http


@pytest.fixture(scope="module")
def pooling_http() -> Iterator[httpx.Client]:
    """A pooling simulator."""
    config = {**CAPTURE_LIKE, "runner": "pooling"}
    with SimulatorProcess(config) as sim, httpx.Client(base_url=sim.base_url, timeout=30) as http:
        yield http


@pytest.mark.parametrize("path", GENERATE_PATHS)
@pytest.mark.parametrize("body", BODIES)
def test_generate_routes_never_fail(generate_http: httpx.Client, path: str, body: bytes) -> None:
    resp = generate_http.post(path, content=body, headers={"content-type": "application/json"})
    assert resp.status_code < 500, resp.text
    assert isinstance(resp.json(), dict)


@pytest.mark.parametrize("path", POOLING_PATHS)
@pytest.mark.parametrize("body", BODIES)
def test_pooling_routes_never_fail(pooling_http: httpx.Client, path: str, body: bytes) -> None:
    resp = pooling_http.post(path, content=body, headers={"content-type": "application/json"})
    assert resp.status_code < 500, resp.text
    assert isinstance(resp.json(), dict)


@pytest.mark.parametrize("path", AUDIO_PATHS)
@pytest.mark.parametrize(
    "content_type",
    ["multipart/form-data", "multipart/form-data; boundary=x", "application/json", "text/plain"],
)
@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"--x\r\n\r\n--x--",
        b"--x\r\nContent-Disposition: form-data\r\n\r\nv\r\n--x--",
        *BODIES[:4],
    ],
)
def test_audio_routes_refuse_bad_forms_with_4xx(
    generate_http: httpx.Client, path: str, content_type: str, body: bytes
) -> None:
    resp = generate_http.post(path, content=body, headers={"content-type": content_type})
    assert 400 <= resp.status_code < 500, resp.text


@pytest.mark.parametrize("path", ["/v1/responses/%00", "/v1/responses/" + "x" * 5000])
def test_odd_response_ids_are_404(generate_http: httpx.Client, path: str) -> None:
    assert generate_http.get(path).status_code == 404
    assert generate_http.post(path + "/cancel").status_code == 404
