"""Forwarder: send a call to a backend (retrying elsewhere while nothing reached the client)."""

from __future__ import annotations

import asyncio
import contextlib
from time import perf_counter

from gateway.config import Limits, ModelConfig
from gateway.errors import GatewayError
from gateway.metering.record import CallRecord
from gateway.proxy.asgi_io import Send, send_bytes
from gateway.proxy.relay import Relay
from gateway.proxy.request_plan import MeasurementPlan
from gateway.routing.model_backends import Backend
from gateway.state import GatewayState
from gateway.upstream.errors import (
    UpstreamConnectError,
    UpstreamDisconnected,
    UpstreamError,
    UpstreamPoolTimeout,
)
from gateway.upstream.response import UpstreamResponse

RETRYABLE_STATUS = frozenset({500, 502, 503})


class Forwarder(Relay):
    """Picks backends, opens the upstream request and hands the response to the relay."""

    def __init__(self, state: GatewayState, record: CallRecord, send: Send, path: str) -> None:
        super().__init__(record, send)
        self.state = state
        self.path = path

    async def forward(self, model: ModelConfig, body: bytes, plan: MeasurementPlan) -> None:
        """Serve the call from the least busy healthy backend."""
        if model.provider == "litellm":
            from gateway.proxy.litellm_route import relay_through_litellm

            await relay_through_litellm(self, model, body, plan)
            return
        tried: list[Backend] = []
        last_problem = ""
        while True:
            backend = self.state.backends.pick(model.name, exclude=tuple(tried))
            if backend is None:
                if tried:
                    raise GatewayError(
                        502, f"Every backend of `{model.name}` failed: {last_problem}"
                    )
                raise GatewayError(
                    503, f"No healthy backend is serving `{model.name}` right now; retry shortly."
                )
            tried.append(backend)
            outcome = await self._try_backend(backend, model, body, plan)
            if outcome is None:
                return
            last_problem = outcome

    async def _try_backend(
        self, backend: Backend, model: ModelConfig, body: bytes, plan: MeasurementPlan
    ) -> str | None:
        """Serve from one backend; return a reason to try another, or None when served."""
        self.record.backend = backend.url
        label = self.backend_label = self._label(backend, model)
        limits = self.state.config.limits
        headers = {"Content-Type": "application/json", "X-Request-Id": self.record.request_id}
        if backend.api_key:
            headers["Authorization"] = f"Bearer {backend.api_key}"
        backend.in_flight += 1
        try:
            self.upstream_started = perf_counter()
            response = await self._open(backend, label, body, headers, limits)
            if isinstance(response, str):
                return response
            try:
                if response.status in RETRYABLE_STATUS and self.state.backends.pick(
                    model.name, exclude=(backend,)
                ):
                    # The backend said it did not serve the call: another one may.
                    with contextlib.suppress(UpstreamError, TimeoutError):
                        await response.read()
                    return f"{label}: answered {response.status}"
                self.fingerprint = backend.system_fingerprint
                await self.relay(response, plan, limits)
                if self.record.backend_fingerprint:
                    backend.system_fingerprint = self.record.backend_fingerprint
            finally:
                response.close()
            return None
        finally:
            backend.in_flight -= 1

    async def _open(
        self,
        backend: Backend,
        label: str,
        body: bytes,
        headers: dict[str, str],
        limits: Limits,
    ) -> UpstreamResponse | str:
        """The response head, or a reason to try another backend (nothing of the call sent)."""
        try:
            return await self.state.upstream.backend(backend.url).post(
                self.path, body, headers, limits.connect_timeout_s, limits.read_timeout_s
            )
        except UpstreamConnectError as error:
            self.state.backends.mark_failed(backend, f"cannot connect: {error}")
            return f"{label}: cannot connect ({error.os_error.strerror or 'no route'})"
        except UpstreamDisconnected as error:
            if not error.request_written:
                return f"{label}: closed before the call was sent"
            # The backend may have acted on the call: sending it elsewhere could run it twice.
            raise GatewayError(
                502, f"The connection to {label} closed before a response ({error})."
            ) from None
        except UpstreamPoolTimeout as error:
            raise GatewayError(
                504, f"No connection to {label} came free: {error}; retry shortly."
            ) from None
        except TimeoutError:
            raise GatewayError(
                504, f"No response came from {label} within {limits.read_timeout_s:g} s."
            ) from None
        except UpstreamError as error:
            raise GatewayError(
                502, f"The gateway refused the response of {label}: {error}."
            ) from None

    def _label(self, backend: Backend, model: ModelConfig) -> str:
        backends = self.state.backends.serving(model.name)
        number = next(i for i, b in enumerate(backends, 1) if b is backend)
        return f"backend {number} of model `{model.name}`"

    async def reply_error(self, error: GatewayError) -> None:
        """Answer an error in OpenAI's shape (as a stream event if the stream already began)."""
        if self.finished:
            return
        # A client that stopped reading cannot hold the call open through its error either.
        stall = self.state.config.limits.backends.stalled_client_timeout_s
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(stall):
                if self.started:
                    await self.send_stream_error(error)
                    return
                self.finished = True
                headers = [*self.response_headers(None), *error.headers]
                await send_bytes(self.send, error.status, error.body(), headers)
