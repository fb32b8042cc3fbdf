"""OtlpPoster: POST one serialized OTLP export request, with the specification's bounded retries."""

from __future__ import annotations

import logging
import threading
import time

from plumbline.blocking_http import BlockingHttp

log = logging.getLogger(__name__)
# Statuses the OTLP specification calls retryable.
RETRYABLE = frozenset({429, 502, 503, 504})
TRIES = 3
BACKOFF_S = 0.5
# The collector's reply is not needed; read a little of it for the log.
READ_LIMIT = 512
# One failure line per this many seconds: a dead collector must not flood the log.
LOG_EVERY_S = 10.0


class OtlpPoster:
    """Sends export requests to one OTLP/HTTP endpoint; never raises, reports success."""

    def __init__(
        self,
        endpoint: str,
        headers: dict[str, str],
        timeout_s: float,
        http: BlockingHttp | None = None,
    ) -> None:
        self.endpoint = endpoint
        # Collector credentials: sent, never logged.
        self._headers = headers | {"Content-Type": "application/x-protobuf"}
        self.timeout_s = timeout_s
        self._http = http or BlockingHttp()
        # Set by `stop`: cuts a retry's back-off short.
        self.stopped = threading.Event()
        self._last_failure_log = 0.0

    def post(self, body: bytes, tries: int = TRIES, what: str = "items") -> bool:
        """POST `body` up to `tries` times (retryable failures only); True when accepted."""
        problem = ""
        for attempt in range(tries):
            if attempt and self.stopped.wait(BACKOFF_S * 2 ** (attempt - 1)):
                break
            try:
                reply = self._http.request(
                    "POST",
                    self.endpoint,
                    timeout_s=self.timeout_s,
                    data=body,
                    headers=self._headers,
                    read_limit=READ_LIMIT,
                    # A collector that trickles its answer still gets only the timeout.
                    total_s=self.timeout_s,
                )
            except Exception as error:  # aiohttp's errors, timeouts, refused connections
                problem = type(error).__name__
                continue
            if 200 <= reply.status < 300:
                return True
            problem = f"HTTP {reply.status}"
            if reply.status not in RETRYABLE:
                break
        self._log_failure(problem, what)
        return False

    def stop(self) -> None:
        """Cut any back-off short and close the connection pool."""
        self.stopped.set()
        self._http.close()

    def _log_failure(self, problem: str, what: str) -> None:
        now = time.monotonic()
        if now - self._last_failure_log < LOG_EVERY_S:
            return
        self._last_failure_log = now
        # The endpoint only: the headers carry the collector's credentials.
        log.warning("OTLP export to %s failed (%s); %s dropped", self.endpoint, problem, what)
