"""An upload's way upstream: streamed as it arrives, written anew, never replayed or fetched."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import orjson
import pytest

from gateway.recording.call_queries import CallFilter, page_of_calls
from plumbline.models import Call
from tests.gateway.audio.audio_files import CLOSE, FORM_TYPE, field, file_part, form, wav
from tests.gateway.audio.raw_http import SOCKET_TIMEOUT_S, chunked, post_head
from tests.gateway.audio.upload_backend import UploadBackend
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config
from tests.support.listener import Listener
from tests.support.waiting import wait_for

pytestmark = pytest.mark.xdist_group("gateway-e2e")
PATH = "/v1/audio/transcriptions"
MARKER = b"FIRST-PART-OF-THE-AUDIO-" * 400
BUSY = b'{"error":{"message":"busy","type":"ServiceUnavailableError","param":null,"code":503}}'
# A safety net for a gateway that holds the upload back; a passing run never waits on it.
NEVER_S = 60.0


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """Postgres only."""
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def backend() -> Iterator[UploadBackend]:
    """The speech model's backend, which says when the start of the audio has reached it."""
    with UploadBackend(marker=MARKER[:-64]) as running:
        yield running


@pytest.fixture(scope="module")
def busy() -> Iterator[tuple[UploadBackend, UploadBackend]]:
    """Two backends of one model that both answer 503 (retryable, for a JSON call)."""
    with (
        UploadBackend(status=503, answer=BUSY) as one,
        UploadBackend(status=503, answer=BUSY) as two,
    ):
        yield one, two


@pytest.fixture(scope="module")
def gateway(
    backend: UploadBackend, busy: tuple[UploadBackend, UploadBackend], database: str
) -> Iterator[GatewayProcess]:
    config = gateway_config(backend.url, limits={"body_read_timeout_s": NEVER_S})
    config["models"][0]["upstream_model"] = "served-whisper"
    config["models"].append(
        {"name": "flaky", "backends": [{"url": busy[0].url}, {"url": busy[1].url}]}
    )
    process = GatewayProcess(config, database)
    with process:
        yield process


def _headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Content-Type": FORM_TYPE}


def test_the_audio_reaches_the_backend_before_the_client_has_sent_it_all(
    gateway: GatewayProcess, backend: UploadBackend, team_key: str
) -> None:
    head = file_part(b"")[:-2]  # the file part's head, without the data's end
    backend.marker_seen.clear()

    def body() -> Iterator[bytes]:
        yield field("model", "tiny") + head + MARKER
        # The rest is sent only once the first part has gone through the gateway: a gateway
        # that held the upload whole would wait here for bytes that never come.
        assert backend.marker_seen.wait(NEVER_S), "the gateway held the upload back"
        yield b"REST-OF-THE-AUDIO\r\n" + CLOSE

    reply = httpx.post(f"{gateway.url}{PATH}", content=body(), headers=_headers(team_key))
    assert reply.status_code == 200, reply.text
    upload = backend.posts()[-1]
    assert upload.headers["Transfer-Encoding"] == "chunked"
    boundary = upload.headers["Content-Type"].removeprefix("multipart/form-data; boundary=")
    assert boundary.startswith("plumbline-")
    assert (
        upload.body
        == (
            f'--{boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n'
            "served-whisper\r\n"
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip.wav"\r\n'
            "Content-Type: audio/wav\r\n\r\n"
        ).encode()
        + MARKER
        + b"REST-OF-THE-AUDIO"
        + f"\r\n--{boundary}--\r\n".encode()
    )


def test_a_streamed_upload_is_never_sent_twice(
    gateway: GatewayProcess,
    busy: tuple[UploadBackend, UploadBackend],
    team_key: str,
    calls: CallReader,
) -> None:
    body = form(field("model", "flaky"), file_part(wav(0.1)))
    reply = httpx.post(f"{gateway.url}{PATH}", content=body, headers=_headers(team_key))
    # A JSON call would go to the other backend; the upload was sent and cannot be replayed.
    assert reply.status_code == 503
    assert reply.content == BUSY
    assert len(busy[0].posts()) + len(busy[1].posts()) == 1
    row = calls.wait(reply.headers["x-plumbline-call-id"])
    assert (row.status_code, row.error_type) == (503, "ServiceUnavailableError")


def test_header_tricks_in_the_form_cannot_add_parts_upstream(
    gateway: GatewayProcess, backend: UploadBackend, team_key: str
) -> None:
    tricky = (
        b"--test-boundary-7f3a\r\nContent-Disposition: form-data; "
        b'name="file"; filename="x\\"; name=\\"model\\""\r\n'
        b"Content-Type: audio/wav\r\n\r\nAUDIO\r\n"
    )
    body = form(field("model", "tiny"), field('lang\\"uage', "en"), tricky)
    before = len(backend.posts())
    reply = httpx.post(f"{gateway.url}{PATH}", content=body, headers=_headers(team_key))
    assert reply.status_code == 200, reply.text
    upload = backend.posts()[before]
    assert b'name="lang%22uage"' in upload.body
    assert b'filename="x%22; name=%22model%22"' in upload.body
    assert upload.body.count(b'name="model"') == 1


def test_a_second_file_after_the_first_never_reaches_the_backend(
    gateway: GatewayProcess, backend: UploadBackend, team_key: str
) -> None:
    body = form(field("model", "tiny"), file_part(b"FIRST"), file_part(b"SMUGGLED-SECOND"))
    reply = httpx.post(f"{gateway.url}{PATH}", content=body, headers=_headers(team_key))
    assert reply.status_code == 400
    assert "parts after `file`" in orjson.loads(reply.content)["error"]["message"]
    assert not any(b"SMUGGLED" in upload.body for upload in backend.posts())


def test_a_file_given_as_a_url_is_never_fetched(gateway: GatewayProcess, team_key: str) -> None:
    with Listener() as listener:
        for name in ("file", "url", "audio_url"):
            body = form(field("model", "tiny"), field("file", f"{listener.url}/{name}.wav"))
            reply = httpx.post(f"{gateway.url}{PATH}", content=body, headers=_headers(team_key))
            assert reply.status_code == 400
            assert "not a text field" in orjson.loads(reply.content)["error"]["message"]
        assert listener.requests() == []


def test_a_team_key_cannot_send_its_upload_as_another_team(
    gateway: GatewayProcess, team_key: str
) -> None:
    body = form(field("model", "tiny"), file_part(wav(0.1)))
    headers = {**_headers(team_key), "X-Plumbline-Team": "team-b"}
    reply = httpx.post(f"{gateway.url}{PATH}", content=body, headers=headers)
    assert reply.status_code == 403


def test_a_client_gone_mid_upload_is_recorded_and_no_whole_upload_reaches_the_backend(
    gateway: GatewayProcess, backend: UploadBackend, team_key: str, calls: CallReader
) -> None:
    backend.marker_seen.clear()
    before = len(backend.posts())
    started = field("model", "tiny") + file_part(b"")[:-2] + MARKER
    host, port = gateway.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=SOCKET_TIMEOUT_S) as sock:
        sock.sendall(post_head(PATH, team_key, FORM_TYPE, None) + chunked(started, end=False))
        assert backend.marker_seen.wait(NEVER_S), "the upload never reached the backend"

    def cancelled() -> Call | None:
        with calls.sessions() as session:
            rows = page_of_calls(session, CallFilter(team_id=None, status="cancelled"), 10, None)
        return next((row for row in rows if row.endpoint == PATH), None)

    row = wait_for(cancelled, timeout=NEVER_S, what="the cut upload's call recorded")
    assert (row.status_code, row.error_type) == (499, "ClientClosedRequest")
    # The backend saw the upload end without its last chunk: it never read one whole.
    assert len(backend.posts()) == before
