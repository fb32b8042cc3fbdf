"""A backend that stops reading an upload: the call ends in a recorded 504, not a hang."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from gateway.recording.call_queries import CallFilter, page_of_calls
from plumbline.models import Call
from tests.gateway.audio.audio_files import FORM_TYPE, field, file_part, form
from tests.gateway.audio.raw_http import SOCKET_TIMEOUT_S, post_head, read_reply
from tests.gateway.audio.upload_backend import UploadBackend
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config
from tests.support.waiting import wait_for

pytestmark = pytest.mark.xdist_group("gateway-e2e")
PATH = "/v1/audio/transcriptions"
# Far more than the socket buffers between gateway and backend hold, within max_body_bytes.
AUDIO_BYTES = 7 * 1024 * 1024
READ_TIMEOUT_S = 2.0


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """Postgres only."""
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def gateway(database: str) -> Iterator[GatewayProcess]:
    with UploadBackend(stalls=True) as backend:
        limits = {"read_timeout_s": READ_TIMEOUT_S, "body_read_timeout_s": SOCKET_TIMEOUT_S}
        with GatewayProcess(gateway_config(backend.url, limits=limits), database) as process:
            yield process


def _send_all(sock: socket.socket, data: bytes) -> None:
    # The gateway may answer and close before it took the whole upload.
    try:
        sock.sendall(data)
    except OSError:
        return


def test_a_backend_that_stops_reading_the_upload_ends_the_call_with_a_recorded_504(
    gateway: GatewayProcess, team_key: str, calls: CallReader
) -> None:
    body = form(field("model", "tiny"), file_part(b"\0" * AUDIO_BYTES))
    host, port = gateway.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=SOCKET_TIMEOUT_S) as sock:
        sock.sendall(post_head(PATH, team_key, FORM_TYPE, len(body)))
        sender = threading.Thread(target=_send_all, args=(sock, body), daemon=True)
        sender.start()
        # The head and the body of the reply may arrive in separate packets.
        answer = read_reply(sock)
    assert answer.status == 504, answer
    assert "within 2 s" in str(answer.error()["message"])

    def recorded() -> Call | None:
        with calls.sessions() as session:
            rows = page_of_calls(session, CallFilter(team_id=None), 10, None)
        return next((row for row in rows if row.endpoint == PATH), None)

    row = wait_for(recorded, timeout=SOCKET_TIMEOUT_S, what="the stalled upload's call recorded")
    assert row.status_code == 504
