"""GET /v1/responses/{id} and POST /v1/responses/{id}/cancel: the owner's calls, pinned.

Only the team that created a response reaches it, and only on the backend that holds it;
every other id (another team's, unknown, malformed) gets the 404 vLLM gives an unknown id.
Each call is recorded (endpoint: the route, never the id); it carries a background response's
tokens when it is the first call to see the response finished.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode

from pydantic import TypeAdapter, ValidationError

from gateway.errors import GatewayError
from gateway.metering.metered import Metered
from gateway.metering.record import CallRecord
from gateway.proxy.asgi_io import Receive, Scope, Send, read_body
from gateway.proxy.call_facts import Planned
from gateway.proxy.call_kinds.responses import Responses
from gateway.proxy.call_kinds.responses_store import (
    ResponseNotFound,
    held_on,
    owned_by,
)
from gateway.proxy.endpoint import ProxyCall
from gateway.proxy.placement import Placement
from gateway.proxy.request_fields import RequestParams
from gateway.proxy.request_plan import MeasurementPlan
from gateway.response_owners.owners import ResponseOwners, StoredOwner
from gateway.state import GatewayState

PREFIX = "/v1/responses/"
ROUTE = re.compile(r"/v1/responses/([^/]*)(/cancel)?")
# Query strings beyond this are no retrieve a client of vLLM sends.
MAX_QUERY_BYTES = 256
T = TypeVar("T")


class RetrievedResponse(Responses):
    """A stored response read back (`GET /v1/responses/{response_id}`)."""

    path = "/v1/responses/{response_id}"


class CancelledResponse(Responses):
    """A background response cancelled (`POST /v1/responses/{response_id}/cancel`)."""

    path = "/v1/responses/{response_id}/cancel"


class SettlingPlacement(Placement):
    """Pinned to the owner's backend; settles a background response seen with its usage."""

    def __init__(self, owners: ResponseOwners, owner: StoredOwner) -> None:
        self.owners = owners
        self.owner = owner
        self.pinned = owner.backend
        self.unavailable = held_on(owner.response_id, owner.model)
        self.settled = False

    async def relayed(self, metered: Metered) -> None:
        """The first call to see a background response's usage records its tokens."""
        if self.owner.background and metered.usage:
            self.settled = await self.owners.settle(self.owner.response_id)


class StoredResponsesEndpoint:
    """The ASGI handler of the retrieve and cancel routes."""

    def __init__(self) -> None:
        self.retrieve = RetrievedResponse()
        self.cancel = CancelledResponse()

    def serves(self, scope: Scope) -> bool:
        """Whether the call is a retrieve (GET) or a cancel (POST) of a stored response."""
        match = ROUTE.fullmatch(scope["path"])
        if match is None:
            return False
        method: str = scope["method"]
        return method == ("POST" if match.group(2) else "GET")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state: GatewayState = scope["app"].state.plumbline
        match = ROUTE.fullmatch(scope["path"])
        assert match is not None
        kind = self.cancel if match.group(2) else self.retrieve
        call = StoredResponseCall(state, scope, receive, send, kind)
        call.response_id = match.group(1)
        call.query = scope.get("query_string", b"")
        await call.run()


def _read_query(query: bytes, cancel: bool) -> tuple[bool, str]:
    """`stream` as vLLM (FastAPI) reads it, and the query sent upstream (only what vLLM reads)."""
    if cancel or not query:
        return False, ""
    if len(query) > MAX_QUERY_BYTES:
        raise GatewayError(400, f"The query string is over {MAX_QUERY_BYTES} bytes.", "query")
    fields = dict(parse_qsl(query.decode("latin-1")))
    upstream: dict[str, str] = {}
    stream = False
    if "stream" in fields:
        stream = _query_value(bool, fields["stream"], "stream")
        upstream["stream"] = "true" if stream else "false"
    if "starting_after" in fields:
        after = _query_value(int, fields["starting_after"], "starting_after")
        upstream["starting_after"] = str(after)
    return stream, f"?{urlencode(upstream)}" if upstream else ""


def _query_value(kind: type[T], value: str, name: str) -> T:
    """A query parameter read as FastAPI reads it for vLLM (pydantic, lax); a 400 naming it."""
    try:
        return TypeAdapter(kind).validate_python(value)
    except ValidationError:
        raise GatewayError(
            400, f"Query parameter `{name}` is not a valid {kind.__name__}.", name
        ) from None


class StoredResponseCall(ProxyCall):
    """One retrieve or cancel: the owner checked, then relayed from the owner's backend."""

    response_id = ""
    query = b""
    placement: SettlingPlacement | None = None

    async def _handle(self) -> None:
        key = await self._authenticate()
        limits = self.state.config.limits
        # A cancel's body is ignored, as vLLM ignores it; it is bounded all the same.
        await read_body(
            self.receive, self.headers, limits.max_body_bytes, limits.body_read_timeout_s
        )
        cancel = isinstance(self.kind, CancelledResponse)
        stream, query = _read_query(self.query, cancel)
        if not any(m.responses_store for m in self.state.config.models):
            raise ResponseNotFound(self.response_id)  # nothing is stored: no lookup to make
        owners = self.state.response_owners
        owner = await owned_by(owners, self.response_id, self.attribution.team_id)
        access = key.models
        if access.restricted and not access.permits(owner.model, self.state.config.model_names):
            # Made with a model this key may not call: it reads as an unknown id, like others.
            raise ResponseNotFound(self.response_id)
        model = self.state.config.model(owner.model)
        if model is None:
            unavailable = held_on(owner.response_id, owner.model)
            raise GatewayError(503, f"{unavailable}: the model is no longer configured.")
        self.params = RequestParams(model=owner.model, stream=stream)
        added = owner.added_top_logprobs
        plan = MeasurementPlan(stream, strip_logprobs=added is not None, captured_k=added or 0)
        self.planned = Planned(self.kind, model, plan)
        self.forwarder.method = "POST" if cancel else "GET"
        self.forwarder.path = f"{PREFIX}{owner.response_id}{'/cancel' if cancel else query}"
        self.placement = SettlingPlacement(owners, owner)
        work = self.forwarder.forward(model, b"", plan, self.kept.keeps_reply, self.placement)
        await self._until_disconnect(work)

    def _record(self, t_done: float) -> CallRecord:
        record = super()._record(t_done)
        if self.placement is not None and self.placement.settled:
            return record
        # Its tokens were (or will be) recorded with the call that created or settled it.
        return replace(
            record,
            usage=None,
            engine_metrics=None,
            token_chunk_times=[],
            completion_tokens_seen=0,
            logprob_chunks=[],
        )
