"""ProxyEndpoint: the ASGI handler behind each proxied OpenAI route (one per call kind)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from dataclasses import replace
from datetime import UTC, datetime
from time import perf_counter
from typing import Any

import orjson
from sqlalchemy.exc import SQLAlchemyError

from gateway.auth.keys import KeyInfo
from gateway.auth.scopes import INFERENCE, check_scope
from gateway.auth.traffic_labels import check_trace_link, check_traffic_label
from gateway.config import ModelConfig
from gateway.errors import GatewayError
from gateway.governance.budgets.lines import Hold
from gateway.governance.model_refusal import model_refusal
from gateway.governance.shedding import Admission
from gateway.ids import new_call_id, new_request_id
from gateway.metering.metered import Failure
from gateway.metering.record import CallRecord
from gateway.proxy.admission import admit, settle
from gateway.proxy.asgi_io import Receive, Scope, Send, header_map, header_text, read_body
from gateway.proxy.call_facts import Arrival, Attribution, Delivery, Kept, Outcome, Planned
from gateway.proxy.call_kinds.base import CallKind
from gateway.proxy.call_record import assemble_record
from gateway.proxy.forward import Forwarder
from gateway.proxy.prompt_prefix import leading_text
from gateway.proxy.rate_limits import Grant, reserved_tokens
from gateway.proxy.relay import Relay
from gateway.proxy.request_fields import (
    RequestParams,
    sampling_params,
    source_of,
    with_fields,
)
from gateway.proxy.request_plan import plan_request
from gateway.proxy.request_upload import RequestUpload
from gateway.proxy.tenant_fields import confine_tenant_fields
from gateway.routing.prefix_blocks import prefix_blocks
from gateway.state import GatewayState
from gateway.tracing.call_trace import call_trace, linked, trace_link_values
from gateway.upstream.streamed_body import StreamedBody

log = logging.getLogger(__name__)
CLIENT_CLOSED = 499
CUT_REPLY_TIMEOUT_S = 0.5


class ProxyEndpoint:
    """One OpenAI endpoint, proxied to the model's backends and recorded."""

    # The scope its key must hold (declared, like each API route's; checked in ProxyCall).
    scope = INFERENCE

    def __init__(self, kind: CallKind) -> None:
        self.kind = kind

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state: GatewayState = scope["app"].state.plumbline
        await ProxyCall(state, scope, receive, send, self.kind).run()


class ProxyCall:
    """The life of one proxied call, from arrival to its record in the log sink."""

    def __init__(
        self, state: GatewayState, scope: Scope, receive: Receive, send: Send, kind: CallKind
    ) -> None:
        t0 = perf_counter()
        self.state = state
        self.receive = receive
        self.headers = header_map(scope)
        client = scope.get("client")
        self.client_host: str | None = client[0] if client else None
        self.kind = kind
        feature = header_text(self.headers, b"x-plumbline-feature", 128)
        # The record's parts, each replaced (never changed) as the call learns more.
        self.arrival = Arrival(
            id=new_call_id(),
            created_at=datetime.now(UTC),
            request_id=header_text(self.headers, b"x-request-id", 128) or new_request_id(),
            endpoint=kind.path,
            t_arrival=t0,
            feature=feature,
            end_user=header_text(self.headers, b"x-plumbline-user", 256),
            trace=call_trace(state.tracing, scope["headers"]),
        )
        self.link_values = trace_link_values(scope["headers"])
        self.attribution = Attribution(
            source_of(feature), state.config.recording.unattributed_retention_days
        )
        self.params = RequestParams()
        self.planned: Planned | None = None
        self.kept = Kept()
        self.failure: Failure | None = None
        self.cancelled = False
        self.relay = Relay(
            send,
            kind,
            t0,
            (self.arrival.request_id, self.arrival.id),
            state.config.limits,
        )
        self.forwarder = Forwarder(state, self.relay, kind.path, self.arrival.trace)
        # The key presented (its limits apply, also when it acts for another team), once
        # verified, and what the call took from its buckets, once admitted.
        self.presented: KeyInfo | None = None
        self.grant: Grant | None = None
        self.hold: Hold | None = None  # what it holds of its spend budgets, once admitted
        # The request's upload, for kinds whose body is streamed upstream as it arrives.
        self.upload: RequestUpload | None = None
        # The call's pass through load shedding, once its model is known.
        self.admission: Admission | None = None

    def _fail(self, error: GatewayError) -> None:
        self.failure = Failure.of(error.status, error.error_type, error.message)

    def _closed(self, message: str) -> None:
        self.cancelled = True
        self.failure = Failure.of(CLIENT_CLOSED, "ClientClosedRequest", message)

    async def run(self) -> None:
        """Serve the call; whatever happens, hand its record to the sink."""
        try:
            await self._handle()
        except GatewayError as error:
            self._fail(error)
            await self.relay.reply_error(error)
        except ConnectionAbortedError:
            self._closed("client closed the connection")
        except asyncio.CancelledError:
            # Not the client (`_until_disconnect` handles that): the server cut the call at
            # the end of the shutdown drain. It ends here, answered and recorded as such.
            await self._cut_by_server()
        except Exception as error:
            log.exception("proxy call %s failed inside the gateway", self.arrival.id)
            failure = GatewayError(
                500,
                f"Gateway error ({type(error).__name__}); call id "
                f"{self.arrival.id} is in the gateway log.",
            )
            self._fail(failure)
            await self.relay.reply_error(failure)
        finally:
            record = self._record(perf_counter())
            self.state.sink.submit(record)
            if self.admission is not None:
                self.admission.leave()
            await settle(self.state.limiter, self.state.budgets, (self.grant, self.hold), record)

    def _record(self, t_done: float) -> CallRecord:
        relay = self.relay
        delivery = Delivery(self.forwarder.backend, relay.response_body, relay.overhead_s)
        metered = relay.metered()
        shed = self.admission.shed if self.admission is not None else None
        if self.upload is not None:
            metered = self.upload.completed(metered)
        return assemble_record(
            self.arrival,
            self.attribution,
            self.params,
            self.planned,
            self.kept,
            metered,
            delivery,
            Outcome(t_done, self.failure, self.cancelled, shed),
        )

    async def _cut_by_server(self) -> None:
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        error = GatewayError(503, "The gateway shut down before the call finished; retry it.")
        self._fail(error)
        # A client too slow to take the error must not hold up the shutdown.
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CUT_REPLY_TIMEOUT_S):
                await self.relay.reply_error(error)

    async def _handle(self) -> None:
        key = await self._authenticate()
        limits = self.state.config.limits
        upload = self.upload = await self.kind.open_upload(self.receive, self.headers, limits)
        if upload is None:
            body = await read_body(
                self.receive, self.headers, limits.max_body_bytes, limits.body_read_timeout_s
            )
        else:
            body = upload.stored()  # the form's fields: an upload's file is never kept
        if key.store_bodies:
            self.kept = Kept(store_body=True, request_body=body)
        payload = self._parse(body) if upload is None else upload.fields
        self.params = sampling_params(payload)
        fields = self.kind.read_fields(payload)
        self.params = with_fields(self.params, fields)
        model = self._model(payload, key)
        self.kind.admit(payload, fields, model, limits)
        attribution = self.attribution
        admission = self.admission = self.state.shedder.admit(
            model, attribution.source, attribution.team_id, attribution.team_name
        )
        admission.enter()  # a 503 if the saturated model sheds this call
        assert self.presented is not None
        reserve = reserved_tokens(fields, limits.rate_limits.assumed_max_tokens)
        admitted = await admit(
            self.state.limiter, self.state.budgets, self.presented, model, len(body), reserve
        )
        self.grant, self.hold = admitted.grant, admitted.hold
        if admitted.refusal is not None:
            raise admitted.refusal
        salted = model.provider == "vllm" and self.kind.salts_cache
        confine_tenant_fields(
            payload,
            fields,
            team_id=self.attribution.team_id,
            is_admin=self.presented is not None and self.presented.is_admin,
            pepper=self.state.settings.key_salt.get_secret_value(),
            media_domains=model.allowed_media_domains,
            salted=salted,
        )
        self.kind.confine(payload)
        # The gateway, not the client, sets vLLM's `priority` on priority-scheduled models.
        prioritised = self.kind.takes_priority and upload is None and admission.prioritise(payload)
        sampler = self.state.sampler
        order = (
            self.kind.live_sampled
            and sampler.active
            and sampler.pick(
                self.arrival.feature,
                self.attribution.source,
                header_text(self.headers, b"x-plumbline-stakes", 16),
                model,
            )
        )
        # A resample replays the request body, which an upload does not keep.
        if order and upload is None:
            self.kept = Kept(self.kept.store_body, body, order)
        plan = plan_request(payload, self.kind, model.logprobs, fields)
        self.planned = Planned(self.kind, model, plan)
        team = self.attribution.team_id
        placement = await self.kind.place(self.state, payload, model, plan, team)
        upstream_body: bytes | StreamedBody
        if model.served_name != payload.get("model"):
            payload["model"] = model.served_name
            upstream_body = self._encode(payload)
        else:
            # A vLLM request always changed: it carries the team's cache salt.
            changed = plan.changed or salted or prioritised
            upstream_body = self._encode(payload) if changed else body
        if upload is not None:
            upstream_body = upload.upstream(payload, model)
        prefix = self._prefix(payload, model)
        keep = self.kept.keeps_reply
        work = self.forwarder.forward(model, upstream_body, plan, keep, placement, prefix)
        await self._until_disconnect(work, upload.finished if upload is not None else None)

    def _prefix(self, payload: dict[str, Any], model: ModelConfig) -> tuple[bytes, ...]:
        """The prompt's leading blocks, hashed, where the model routes by them (else none)."""
        if not self.state.backends.uses_prefix(model.name):
            return ()
        values = self.kind.prompt_values(payload)
        if not values:
            return ()
        bounds = model.prefix_affinity
        text = leading_text(values, bounds.prefix_chars)
        return prefix_blocks(text, str(self.attribution.team_id), bounds.block_chars)

    async def _authenticate(self) -> KeyInfo:
        token = self.kind.presented_key(self.headers)
        if token is None:
            raise GatewayError(
                401,
                f"Missing API key: send {self.kind.key_hint} "
                "(create one with `plumbline keys create --team NAME`).",
            )
        try:
            info = await self.state.keys.resolve(token, self.client_host)
        except SQLAlchemyError:
            raise GatewayError(
                503, "The key store is unreachable and this key is not cached; retry shortly."
            ) from None
        if info is None:
            raise GatewayError(401, "Invalid or revoked API key.")
        self.attribution = replace(self.attribution, key_id=info.key_id)
        self.presented = info
        try:
            check_scope(info, ProxyEndpoint.scope)
            check_traffic_label(info, self.arrival.feature)
            check_trace_link(info, bool(self.link_values))
        except GatewayError:
            # A refused scope or label is the team's call, not counted as eval traffic.
            self.attribution = replace(self.attribution.to_team(info), source="product")
            raise
        self.arrival = replace(self.arrival, trace=linked(self.arrival.trace, self.link_values))
        on_behalf = header_text(self.headers, b"x-plumbline-team", 128)
        if on_behalf is not None and on_behalf != info.team_name:
            info = await self._act_for_team(info, on_behalf)
        self.attribution = self.attribution.to_team(info)
        return info

    async def _act_for_team(self, info: KeyInfo, team: str) -> KeyInfo:
        """Admin keys (eval workers, the resampler) may attribute a call to another team."""
        if not info.is_admin:
            raise GatewayError(403, "Only admin keys may set X-Plumbline-Team.")
        try:
            acting = await self.state.keys.team(team)
        except SQLAlchemyError:
            raise GatewayError(503, "The key store is unreachable; retry shortly.") from None
        if acting is None:
            raise GatewayError(404, f"No team named `{team}`.", "X-Plumbline-Team")
        return KeyInfo(
            key_id=info.key_id,
            team_id=acting.team_id,
            team_name=acting.team_name,
            is_admin=False,
            store_bodies=acting.store_bodies,
            retention_days=acting.retention_days,
            prefix=info.prefix,
            models=acting.models,  # the acting team's model list, not the admin key's
        )

    @staticmethod
    def _parse(body: bytes) -> dict[str, Any]:
        try:
            payload = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise GatewayError(400, f"Request body is not valid JSON: {error}", "body") from None
        if not isinstance(payload, dict):
            raise GatewayError(400, "Request body must be a JSON object.", "body")
        return payload

    @staticmethod
    def _encode(payload: dict[str, Any]) -> bytes:
        try:
            return orjson.dumps(payload)
        except TypeError:
            # orjson reads 1024 levels of nesting but writes only 254.
            raise GatewayError(
                400, "Request body nests too deeply (at most 254 levels).", "body"
            ) from None

    def _model(self, payload: dict[str, Any], key: KeyInfo) -> ModelConfig:
        name = payload.get("model")
        if not isinstance(name, str) or not name:
            raise GatewayError(400, "You must provide a model name in the `model` field.", "model")
        config = self.state.config
        model = config.model(name)
        if model is None or not key.models.permits(name, config.model_names):
            raise model_refusal(name, key.models, config.model_names)
        return model

    async def _until_disconnect(
        self, work: Awaitable[None], body_read: asyncio.Event | None = None
    ) -> None:
        """Run `work`, cancelling it (and so the upstream request) if the client hangs up.

        With `body_read`, the body is still being read by `work`: watch only once it was.
        """
        task = asyncio.current_task()
        assert task is not None
        client_gone = False

        async def watch() -> None:
            nonlocal client_gone
            if body_read is not None:
                await body_read.wait()
            while True:
                message = await self.receive()
                if message["type"] == "http.disconnect":
                    if not self.relay.finished:
                        client_gone = True
                        task.cancel()
                    return

        watcher = asyncio.create_task(watch())
        try:
            await work
        except asyncio.CancelledError:
            if not client_gone:
                raise
            task.uncancel()
            self._closed("client disconnected")
        finally:
            watcher.cancel()
