"""Relay: send the client its reply, passing a backend's response through the kind's meter."""

from __future__ import annotations

import asyncio
import contextlib
from time import perf_counter

from gateway.config import Limits
from gateway.errors import GatewayError
from gateway.metering.metered import Metered
from gateway.proxy.asgi_io import Send, send_bytes
from gateway.proxy.call_kinds.base import CallKind, ResponseMeter
from gateway.proxy.request_plan import MeasurementPlan
from gateway.proxy.send_watchdog import SendWatchdog
from gateway.proxy.sse_cut import EventTooLarge, cut_events, one_event
from gateway.proxy.upstream_errors import UpstreamProtocolError
from gateway.upstream.errors import UpstreamPayloadError, UpstreamRefused
from gateway.upstream.response import UpstreamResponse

STORED_STREAM_LIMIT = 1 << 20


class Relay:
    """The client's side of a call: its reply (body or stream), metered by the call kind.

    Knows nothing of the kind's API: the kind's meter restores and measures each body or event.
    """

    def __init__(
        self,
        send: Send,
        kind: CallKind,
        t0: float,
        ids: tuple[str, str],
        limits: Limits,
    ) -> None:
        self.send = send
        self.kind = kind
        self.request_id, self.call_id = ids
        self.limits = limits
        self.started = False
        self.finished = False
        # How errors name the backend: never its URL, which may carry credentials.
        self.backend_label = "the backend"
        self.meter: ResponseMeter | None = None
        # What the client got, when the call's bodies are kept.
        self.response_body: bytes | None = None
        # The gateway's own time: from arrival (t0) to the upstream request, then processing.
        self._t0 = t0
        self.upstream_started: float | None = None
        self.processing_s = 0.0

    @property
    def overhead_s(self) -> float:
        """Time spent in the gateway so far."""
        end = self.upstream_started if self.upstream_started is not None else perf_counter()
        return (end - self._t0) + self.processing_s

    def new_meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """The meter of the one response this call relays."""
        self.meter = self.kind.meter(plan, fingerprint)
        return self.meter

    def metered(self) -> Metered:
        """What the response's meter measured (nothing, if no response came)."""
        return self.meter.result() if self.meter is not None else Metered()

    def response_headers(self, content_type: str | None) -> list[tuple[bytes, bytes]]:
        """Headers the gateway sends on every reply."""
        headers = [
            (b"content-type", (content_type or "application/json").encode("latin-1")),
            (b"x-request-id", self.request_id.encode("latin-1", "replace")),
            (b"x-plumbline-call-id", self.call_id.encode()),
            (b"x-plumbline-overhead-ms", f"{self.overhead_s * 1000:.3f}".encode()),
        ]
        return headers

    async def relay(
        self,
        response: UpstreamResponse,
        plan: MeasurementPlan,
        fingerprint: str | None,
        keep: bool,
    ) -> str | None:
        """Relay a stream as events arrive, or a body once complete; the fingerprint it showed.

        `fingerprint` is the backend's as known so far; `keep` keeps what the client got.
        """
        content_type = response.headers.get("Content-Type", "")
        label = self.backend_label
        limits = self.limits
        meter = self.new_meter(plan, fingerprint)
        try:
            if plan.stream and response.status == 200 and "event-stream" in content_type:
                await self._relay_stream(response, meter, keep)
            else:
                await self._relay_body(response, meter, keep)
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
        return meter.fingerprint

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
        self, response: UpstreamResponse, meter: ResponseMeter, keep: bool
    ) -> None:
        body = await response.read()
        t = perf_counter()
        content_type = response.headers.get("Content-Type")
        try:
            out = meter.body(body, response.status)
        except UpstreamProtocolError as error:
            raise GatewayError(
                502,
                f"The answer of {self.backend_label} ({response.status}) is not "
                f"{self.kind.body_format}: {error}.",
            ) from None
        if keep:
            self.response_body = out
        self.processing_s += perf_counter() - t
        self.finished = True
        limits = self.limits
        try:
            async with asyncio.timeout(limits.backends.stalled_client_timeout_s):
                await self.send_reply(response.status, out, content_type or "application/json")
        except TimeoutError:
            raise self._client_stalled(limits) from None

    async def _relay_stream(
        self, response: UpstreamResponse, meter: ResponseMeter, keep: bool
    ) -> None:
        watchdog: SendWatchdog | None = None
        limits = self.limits
        try:
            async with asyncio.timeout(None) as guard:
                watchdog = SendWatchdog(guard, limits.backends.stalled_client_timeout_s)
                await self._relay_events(response, meter, keep, watchdog)
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
        meter: ResponseMeter,
        keep: bool,
        watchdog: SendWatchdog,
    ) -> None:
        watchdog.sending()
        await self.send_stream_start(response.headers.get("Content-Type", "text/event-stream"))
        watchdog.sent()
        stored: list[bytes] = []
        stored_size = 0
        limits = self.limits
        max_event = limits.backends.max_sse_event_bytes
        budget = limits.backends.max_stream_bytes
        send = self.send
        feed = meter.feed
        next_chunk = response.next_chunk
        buffer = b""
        while data := await next_chunk():
            t = perf_counter()
            budget -= len(data)
            if budget < 0:
                raise GatewayError(
                    502,
                    f"The stream of {self.backend_label} ran over "
                    f"{limits.backends.max_stream_bytes} bytes; it was cut.",
                )
            try:
                if not buffer and one_event(data):
                    # What a backend's cadence brings: one whole event, nothing to cut or keep.
                    if len(data) > max_event:
                        raise EventTooLarge
                    out = feed(data, t)
                else:
                    out, buffer = cut_events(feed, buffer, data, t, max_event)
            except UpstreamProtocolError as error:
                raise GatewayError(502, f"{error} ({self.backend_label}).") from None
            except EventTooLarge:
                raise self._event_too_large(max_event) from None
            if out:
                chunk = out[0] if len(out) == 1 else b"".join(out)
                if keep and stored_size < STORED_STREAM_LIMIT:
                    stored.append(chunk)
                    stored_size += len(chunk)
                self.processing_s += perf_counter() - t
                watchdog.sending()
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                watchdog.sent()
            else:
                self.processing_s += perf_counter() - t
        if not meter.done:
            raise GatewayError(
                502, f"The stream of {self.backend_label} ended without `{self.kind.stream_end}`."
            )
        tail = b"".join(meter.flush())
        self.finished = True
        if stored:
            self.response_body = b"".join(stored)
        watchdog.sending()
        await self.send_chunk(tail, last=True)
        watchdog.sent()

    async def send_stream_error(self, error: GatewayError) -> None:
        """End a started stream with the kind's error event."""
        self.finished = True
        event = self.kind.stream_error(error)
        await self.send({"type": "http.response.body", "body": event, "more_body": False})

    async def reply_error(self, error: GatewayError) -> None:
        """Answer an error in the kind's shape (as a stream event if the stream already began)."""
        if self.finished:
            return
        # A client that stopped reading cannot hold the call open through its error either.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.limits.backends.stalled_client_timeout_s):
                if self.started:
                    await self.send_stream_error(error)
                    return
                self.finished = True
                headers = [*self.response_headers(None), *error.headers]
                await send_bytes(self.send, error.status, self.kind.error_body(error), headers)
