"""Relay: pass a backend's response to the client, metering it on the way."""

from __future__ import annotations

import asyncio
from time import perf_counter

from gateway.config import Limits
from gateway.errors import GatewayError
from gateway.metering.record import CallRecord
from gateway.proxy.asgi_io import Send, send_bytes
from gateway.proxy.body_transform import transform_body
from gateway.proxy.request_plan import MeasurementPlan
from gateway.proxy.send_watchdog import SendWatchdog
from gateway.proxy.stream_transform import StreamTransform
from gateway.proxy.upstream_errors import UpstreamProtocolError
from gateway.upstream.errors import UpstreamPayloadError, UpstreamRefused
from gateway.upstream.response import UpstreamResponse

STORED_STREAM_LIMIT = 1 << 20
DONE_EVENT = b"data: [DONE]\n\n"


class Relay:
    """Response half of a call: headers, body or stream, and the gateway's own time."""

    def __init__(self, record: CallRecord, send: Send) -> None:
        self.record = record
        self.send = send
        self.started = False
        self.finished = False
        self.upstream_started: float | None = None
        self.fingerprint: str | None = None
        self.processing_s = 0.0
        # How errors name the backend: never its URL, which may carry credentials.
        self.backend_label = "the backend"
        self._t0 = record.t_arrival

    def mark_upstream_start(self, t0: float) -> None:
        """Remember the arrival time the pre-upstream overhead counts from."""
        self._t0 = t0

    @property
    def overhead_s(self) -> float:
        """Time spent in the gateway: before the upstream request, plus processing after."""
        end = self.upstream_started if self.upstream_started is not None else perf_counter()
        return (end - self._t0) + self.processing_s

    def response_headers(self, content_type: str | None) -> list[tuple[bytes, bytes]]:
        """Headers the gateway sends on every reply."""
        headers = [
            (b"content-type", (content_type or "application/json").encode("latin-1")),
            (b"x-request-id", self.record.request_id.encode("latin-1", "replace")),
            (b"x-plumbline-call-id", self.record.id.encode()),
            (b"x-plumbline-overhead-ms", f"{self.overhead_s * 1000:.3f}".encode()),
        ]
        return headers

    async def relay(
        self, response: UpstreamResponse, plan: MeasurementPlan, limits: Limits
    ) -> None:
        """Relay a stream as events arrive, or a body once complete."""
        content_type = response.headers.get("Content-Type", "")
        label = self.backend_label
        try:
            if plan.stream and response.status == 200 and "event-stream" in content_type:
                await self._relay_stream(response, plan, limits)
            else:
                await self._relay_body(response, plan, limits)
        except TimeoutError:
            raise GatewayError(
                504,
                f"No bytes came from {label} for {limits.read_timeout_s:g} s; "
                "the call was abandoned.",
            ) from None
        except UpstreamPayloadError as error:
            raise GatewayError(
                502, f"The connection to {label} closed before the response ended ({error})."
            ) from None
        except UpstreamRefused as error:
            raise GatewayError(
                502, f"The gateway refused the response of {label}: {error}."
            ) from None
        response.release()

    def _event_too_large(self, limit: int) -> GatewayError:
        return GatewayError(
            502,
            f"The stream of {self.backend_label} sent an event of over {limit} bytes; it was cut.",
        )

    def _client_stalled(self, limits: Limits) -> GatewayError:
        # Nothing more can reach a client that does not read: the call ends unanswered.
        self.finished = True
        timeout = limits.backends.stalled_client_timeout_s
        return GatewayError(
            504, f"The client stopped reading for {timeout:g} s; the call was abandoned."
        )

    async def send_reply(self, status: int, body: bytes, content_type: str) -> None:
        """Send a whole response."""
        await send_bytes(self.send, status, body, self.response_headers(content_type))

    async def send_stream_start(self, content_type: str) -> None:
        """Send the headers of a stream."""
        headers = self.response_headers(content_type)
        await self.send({"type": "http.response.start", "status": 200, "headers": headers})
        self.started = True

    async def send_chunk(self, data: bytes, last: bool = False) -> None:
        """Send part of a stream."""
        await self.send({"type": "http.response.body", "body": data, "more_body": not last})

    async def _relay_body(
        self, response: UpstreamResponse, plan: MeasurementPlan, limits: Limits
    ) -> None:
        body = await response.read()
        t = perf_counter()
        content_type = response.headers.get("Content-Type")
        try:
            out = transform_body(body, response.status, self.record, plan)
        except UpstreamProtocolError as error:
            raise GatewayError(
                502,
                f"The answer of {self.backend_label} ({response.status}) is not "
                f"OpenAI JSON: {error}.",
            ) from None
        if self.record.store_body or self.record.live_sample is not None:
            self.record.response_body = out
        self.processing_s += perf_counter() - t
        self.finished = True
        try:
            async with asyncio.timeout(limits.backends.stalled_client_timeout_s):
                await self.send_reply(response.status, out, content_type or "application/json")
        except TimeoutError:
            raise self._client_stalled(limits) from None

    async def _relay_stream(
        self, response: UpstreamResponse, plan: MeasurementPlan, limits: Limits
    ) -> None:
        watchdog: SendWatchdog | None = None
        try:
            async with asyncio.timeout(None) as guard:
                watchdog = SendWatchdog(guard, limits.backends.stalled_client_timeout_s)
                await self._relay_events(response, plan, limits, watchdog)
        except TimeoutError:
            # The guard turns its cancel into TimeoutError; a backend's silence is one too.
            if watchdog is None or not watchdog.fired:
                raise
            raise self._client_stalled(limits) from None
        finally:
            if watchdog is not None:
                watchdog.stop()

    async def _relay_events(
        self,
        response: UpstreamResponse,
        plan: MeasurementPlan,
        limits: Limits,
        watchdog: SendWatchdog,
    ) -> None:
        watchdog.sending()
        await self.send_stream_start(response.headers.get("Content-Type", "text/event-stream"))
        watchdog.sent()
        transform = StreamTransform(self.record, plan, self.fingerprint)
        stored: list[bytes] = []
        stored_size = 0
        keep = self.record.store_body or self.record.live_sample is not None
        max_event = limits.backends.max_sse_event_bytes
        budget = limits.backends.max_stream_bytes
        buffer = b""
        async for data in response.iter_chunks():
            t = perf_counter()
            budget -= len(data)
            if budget < 0:
                raise GatewayError(
                    502,
                    f"The stream of {self.backend_label} ran over "
                    f"{limits.backends.max_stream_bytes} bytes; it was cut.",
                )
            # Only the new bytes (and the one before, for a split blank line) are searched, and
            # events are cut by offset, so a chunk costs time in its own size only.
            scan = len(buffer) - 1 if buffer else 0
            buffer += data
            start = 0
            out: list[bytes] = []
            while (end := buffer.find(b"\n\n", scan)) >= 0:
                if end + 2 - start > max_event:
                    raise self._event_too_large(max_event)
                try:
                    out.extend(transform.feed(buffer[start : end + 2], t))
                except UpstreamProtocolError as error:
                    raise GatewayError(502, f"{error} ({self.backend_label}).") from None
                start = scan = end + 2
            if start:
                buffer = buffer[start:]
            if len(buffer) > max_event:
                raise self._event_too_large(max_event)
            if out:
                chunk = b"".join(out)
                if keep and stored_size < STORED_STREAM_LIMIT:
                    stored.append(chunk)
                    stored_size += len(chunk)
                self.processing_s += perf_counter() - t
                watchdog.sending()
                await self.send_chunk(chunk)
                watchdog.sent()
            else:
                self.processing_s += perf_counter() - t
        if not transform.done:
            raise GatewayError(
                502, f"The stream of {self.backend_label} ended without `data: [DONE]`."
            )
        tail = b"".join(transform.flush())
        self.record.backend_fingerprint = transform.fingerprint
        self.finished = True
        if stored:
            self.record.response_body = b"".join(stored)
        watchdog.sending()
        await self.send_chunk(tail, last=True)
        watchdog.sent()

    async def send_stream_error(self, error: GatewayError) -> None:
        """End a started stream with an error event, as vLLM does for mid-stream failures."""
        self.finished = True
        event = b"data: " + error.body() + b"\n\n"
        await self.send(
            {"type": "http.response.body", "body": event + DONE_EVENT, "more_body": False}
        )
