"""Hostile uploads to /v1/audio/*: each is an OpenAI-shaped 4xx, recorded, never a 5xx."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.gateway.audio.audio_files import CLOSE, FORM_TYPE, field, file_part, form, wav
from tests.gateway.audio.conftest import BODY_TIMEOUT_S, MAX_BODY
from tests.gateway.audio.raw_http import RawReply, chunked, exchange, post_head
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess

pytestmark = pytest.mark.xdist_group("gateway-e2e")
PATH = "/v1/audio/transcriptions"
MODEL = field("model", "tiny")
AUDIO = file_part(wav(0.2))


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """Postgres only: the refusals do not depend on the store."""
    with postgres_database() as url:
        yield url


def _send(
    gateway: GatewayProcess, key: str, body: bytes, content_type: str = FORM_TYPE
) -> RawReply:
    return exchange(gateway.url, post_head(PATH, key, content_type, len(body)), body)


def _refused(reply: RawReply, calls: CallReader, status: int, says: str) -> None:
    assert reply.status == status, reply.body
    error = reply.error()
    assert says in str(error["message"]), error
    row = calls.wait(reply.headers["x-plumbline-call-id"])
    assert (row.status_code, row.endpoint) == (status, PATH)
    assert row.team_id is not None


BAD_FORMS = [
    pytest.param("application/json", b'{"model": "tiny"}', "multipart/form-data", id="json"),
    pytest.param("multipart/form-data", form(MODEL, AUDIO), "boundary", id="no-boundary"),
    pytest.param(FORM_TYPE, form(MODEL), "no `file` part", id="no-file"),
    pytest.param(FORM_TYPE, form(MODEL, field("file", "x")), "uploaded file", id="file-as-text"),
    pytest.param(
        FORM_TYPE,
        form(*[field(f"f{i}", "1") for i in range(65)], AUDIO),
        "over 64 parts",
        id="many-parts",
    ),
    pytest.param(
        FORM_TYPE, form(MODEL, field("prompt", "w" * 70_000), AUDIO), "over 65536", id="huge-field"
    ),
    pytest.param(
        FORM_TYPE,
        form(MODEL, f"--test-boundary-7f3a\r\nX-Pad: {'p' * 5000}\r\n\r\n".encode()),
        "part head is over",
        id="huge-head",
    ),
    pytest.param(FORM_TYPE, form(AUDIO, MODEL), "provide a model name", id="model-after-file"),
    pytest.param(
        FORM_TYPE,
        form(MODEL, AUDIO, field("language", "en")),
        "parts after `file`",
        id="after-file",
    ),
    pytest.param(FORM_TYPE, MODEL + AUDIO, "ended before its closing boundary", id="truncated"),
    pytest.param(FORM_TYPE, b"no boundary anywhere", "ended before", id="no-delimiter"),
    pytest.param(
        FORM_TYPE,
        form(MODEL, b"--test-boundary-7f3a\r\nContent-Type: text/plain\r\n\r\nx\r\n", AUDIO),
        "no Content-Disposition",
        id="unnamed-part",
    ),
    pytest.param(
        FORM_TYPE, form(MODEL, field("model", "tiny"), AUDIO), "more than once", id="model-twice"
    ),
    pytest.param(
        FORM_TYPE, form(MODEL, field("stream", "maybe"), AUDIO), "`stream`", id="bad-stream"
    ),
    pytest.param(
        FORM_TYPE, form(field("model", "nope"), AUDIO), "does not exist", id="unknown-model"
    ),
    pytest.param(
        FORM_TYPE, form(MODEL, field("vllm_xargs", "{}"), AUDIO), "not accepted", id="vllm-xargs"
    ),
]


@pytest.mark.parametrize(("content_type", "body", "says"), BAD_FORMS)
def test_a_bad_form_is_a_recorded_4xx(
    gateway: GatewayProcess,
    team_key: str,
    calls: CallReader,
    content_type: str,
    body: bytes,
    says: str,
) -> None:
    reply = _send(gateway, team_key, body, content_type)
    status = 404 if says == "does not exist" else 400
    _refused(reply, calls, status, says)


def test_a_declared_length_over_the_bound_is_refused_at_once(
    gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    # Only the head is sent: the answer cannot wait for the body.
    reply = exchange(gateway.url, post_head(PATH, team_key, FORM_TYPE, MAX_BODY + 1))
    _refused(reply, calls, 413, "exceeds the gateway's limit")


def test_a_chunked_upload_is_refused_as_it_crosses_the_bound(
    gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    audio = file_part(b"\0" * (MAX_BODY + 1))
    reply = exchange(
        gateway.url, post_head(PATH, team_key, FORM_TYPE, None), chunked(MODEL, audio, CLOSE)
    )
    _refused(reply, calls, 413, "exceeds the gateway's limit")


def test_a_body_that_never_ends_is_a_408(
    gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    # The form stops inside the file and the connection stays open.
    opened = MODEL + AUDIO[:200]
    reply = exchange(
        gateway.url, post_head(PATH, team_key, FORM_TYPE, None), chunked(opened, end=False)
    )
    _refused(reply, calls, 408, f"within {BODY_TIMEOUT_S:g} s")


def test_a_litellm_model_is_refused_before_any_audio_is_sent(
    gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    reply = _send(gateway, team_key, form(field("model", "hosted"), AUDIO))
    _refused(reply, calls, 404, "`/v1/audio/*` needs a vLLM backend")


def test_translations_refuse_a_bad_form_alike(
    gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    body = form(MODEL)
    path = "/v1/audio/translations"
    reply = exchange(gateway.url, post_head(path, team_key, FORM_TYPE, len(body)), body)
    assert reply.status == 400
    assert "no `file` part" in str(reply.error()["message"])
    assert calls.wait(reply.headers["x-plumbline-call-id"]).endpoint == path
