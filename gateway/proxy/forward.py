"""Forwarder: send a call to a backend (retrying elsewhere while nothing reached the client)."""

from __future__ import annotations

import contextlib
from time import perf_counter

from gateway.config import Limits, ModelConfig
from gateway.errors import GatewayError
from gateway.proxy.placement import ANYWHERE, Placement
from gateway.proxy.relay import Relay
from gateway.proxy.request_plan import MeasurementPlan
from gateway.routing.model_backends import Backend
from gateway.state import GatewayState
from gateway.tracing.call_trace import CallTrace
from gateway.upstream.errors import (
    UpstreamConnectError,
    UpstreamDisconnected,
    UpstreamError,
    UpstreamPoolTimeout,
)
from gateway.upstream.response import UpstreamResponse
from gateway.upstream.streamed_body import StreamedBody, replayable

RETRYABLE_STATUS = frozenset({500, 502, 503})


class Forwarder:
    """Picks backends, opens the upstream request and hands the response to the relay.

    Knows nothing of the call's kind: the relay and its meter do.
    """

    def __init__(
        self, state: GatewayState, relay: Relay, path: str, trace: CallTrace | None = None
    ) -> None:
        self.state = state
        self.relay = relay
        # The call's traceparent/tracestate, the same on every attempt: the gateway's span.
        self.trace_headers = dict(trace.upstream_headers) if trace is not None else {}
        # The upstream request line the call goes to (a GET has no body).
        self.method = "POST"
        self.path = path
        # Where the call was sent last (a backend's URL, or litellm's model).
        self.backend: str | None = None

    async def forward(
        self,
        model: ModelConfig,
        body: bytes | StreamedBody,
        plan: MeasurementPlan,
        keep: bool,
        placement: Placement = ANYWHERE,
        prefix: tuple[bytes, ...] = (),
    ) -> None:
        """Serve the call from the backend the model's routing picks (or the pinned one), by
        `prefix` (its prompt's block hashes) where it routes so; `keep` keeps the reply. A
        streamed body goes to another backend only while none of it was sent."""
        if model.provider == "litellm":
            assert isinstance(body, bytes), "a streamed body's kind refuses litellm models"
            from gateway.proxy.litellm_route import relay_through_litellm

            self.backend = f"litellm:{model.litellm_model}"
            await relay_through_litellm(self.relay, model, body, plan)
            return
        if placement.pinned is not None:
            await self._forward_pinned(model, body, plan, keep, placement)
            return
        tried: list[Backend] = []
        last_problem = ""
        while True:
            backend = self.state.backends.route(model.name, prefix, exclude=tuple(tried))
            if backend is None:
                if tried:
                    raise GatewayError(
                        502, f"Every backend of `{model.name}` failed: {last_problem}"
                    )
                raise GatewayError(
                    503, f"No healthy backend is serving `{model.name}` right now; retry shortly."
                )
            tried.append(backend)
            outcome = await self._try_backend(backend, model, body, plan, keep, placement)
            if outcome is None:
                return
            last_problem = outcome

    async def _forward_pinned(
        self,
        model: ModelConfig,
        body: bytes | StreamedBody,
        plan: MeasurementPlan,
        keep: bool,
        placement: Placement,
    ) -> None:
        """Serve from the one backend that holds what the call needs, or answer a 503."""
        backend = next(
            (b for b in self.state.backends.serving(model.name) if b.url == placement.pinned), None
        )
        if backend is None:
            raise GatewayError(503, f"{placement.unavailable}: it is no longer configured.")
        if not backend.healthy:
            raise GatewayError(503, f"{placement.unavailable}: it is down; retry later.")
        problem = await self._try_backend(backend, model, body, plan, keep, placement)
        if problem is not None:
            raise GatewayError(503, f"{placement.unavailable}: {problem}; retry later.")

    async def _try_backend(
        self,
        backend: Backend,
        model: ModelConfig,
        body: bytes | StreamedBody,
        plan: MeasurementPlan,
        keep: bool,
        placement: Placement,
    ) -> str | None:
        """Serve from one backend; return a reason to try another, or None when served."""
        relay = self.relay
        self.backend = backend.url
        label = relay.backend_label = self._label(backend, model)
        limits = self.state.config.limits
        headers = {"X-Request-Id": relay.request_id, **self.trace_headers}
        if self.method == "POST":
            content = body.content_type if isinstance(body, StreamedBody) else "application/json"
            headers = {"Content-Type": content, **headers}
        if backend.api_key:
            headers["Authorization"] = f"Bearer {backend.api_key}"
        backend.in_flight += 1
        try:
            relay.upstream_started = perf_counter()
            response = await self._open(backend, label, body, headers, limits)
            if isinstance(response, str):
                return response
            try:
                if (
                    response.status in RETRYABLE_STATUS
                    and placement.pinned is None
                    and replayable(body)
                    and self.state.backends.pick(model.name, exclude=(backend,))
                ):
                    # The backend said it did not serve the call: another one may.
                    with contextlib.suppress(UpstreamError, TimeoutError):
                        await response.read()
                    return f"{label}: answered {response.status}"
                await placement.answered(backend.url, response.status)
                fingerprint = await relay.relay(response, plan, backend.system_fingerprint, keep)
                if fingerprint:
                    backend.system_fingerprint = fingerprint
                await placement.relayed(relay.metered())
            finally:
                response.close()
            return None
        finally:
            backend.in_flight -= 1

    async def _open(
        self,
        backend: Backend,
        label: str,
        body: bytes | StreamedBody,
        headers: dict[str, str],
        limits: Limits,
    ) -> UpstreamResponse | str:
        """The response head, or a reason to try another backend (nothing of the call sent)."""
        try:
            return await self.state.upstream.backend(backend.url).request(
                self.method,
                self.path,
                body,
                headers,
                limits.connect_timeout_s,
                limits.read_timeout_s,
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
