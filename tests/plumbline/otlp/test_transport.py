"""OtlpPoster against collectors that answer, refuse, and trickle."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from plumbline.otlp.transport import OtlpPoster
from tests.support.otlp_receiver import OtlpReceiver


class TricklingCollector:
    """Accepts, then sends one byte of a header value every 0.1 s and never ends the head.

    One long line, not many: a client's limit on header count would end many lines early.
    """

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(8)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        connection, _ = self._socket.accept()
        with connection:
            connection.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            while not self._stop.wait(0.1):
                try:
                    connection.sendall(b"a")
                except OSError:
                    return

    def __enter__(self) -> TricklingCollector:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._socket.close()


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


def test_an_accepted_export_is_true(receiver: OtlpReceiver) -> None:
    poster = OtlpPoster(f"{receiver.url}/v1/traces", {}, timeout_s=5.0)
    try:
        assert poster.post(b"") is True
    finally:
        poster.stop()


@pytest.mark.timeout(60)
def test_a_collector_that_trickles_its_answer_gets_only_the_timeout() -> None:
    # Each read is within the timeout; without a bound on the whole exchange this never ends.
    with TricklingCollector() as collector:
        poster = OtlpPoster(f"{collector.url}/v1/traces", {}, timeout_s=1.0)
        try:
            assert poster.post(b"", tries=1) is False
        finally:
            poster.stop()
