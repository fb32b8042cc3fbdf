"""Stored responses on the Responses kind: owners recorded, follow-ups pinned and checked.

vLLM keeps a stored response in the one server process that made it, for anyone who knows its
id. The gateway names each stored response itself (vLLM takes the body's `request_id` as the
response id), records its team and backend before the client can see the id, and lets only
that team's calls reach it, on that backend.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

import orjson

from gateway.errors import GatewayError
from gateway.metering.metered import Metered
from gateway.proxy.placement import Placement
from gateway.response_owners.owners import ResponseOwners, StoredOwner

# vLLM's own ids are `resp_` and 32 hex digits; anything far longer is no id the gateway made.
MAX_RESPONSE_ID = 64
ENABLE_STORE = (
    "set `responses_store: true` on the model in the gateway config once its backends run "
    "with VLLM_ENABLE_RESPONSES_API_STORE=1"
)


class ResponseNotFound(GatewayError):
    """vLLM's 404 for a response id its store does not hold: also for another team's id."""

    def __init__(self, response_id: str) -> None:
        shown = response_id[:MAX_RESPONSE_ID]
        super().__init__(404, f"Response with id '{shown}' not found.", "response_id")

    @property
    def error_type(self) -> str:
        """vLLM's type for this error."""
        return "invalid_request_error"

    def body(self) -> bytes:
        """The body vLLM answers, byte for byte in its field order."""
        error = {"message": self.message, "type": self.error_type, "param": self.param}
        return orjson.dumps({"error": {**error, "code": self.status}})


def new_response_id() -> str:
    """A response id in vLLM's form, unguessable (128 random bits)."""
    return f"resp_{uuid.uuid4().hex}"


async def owned_by(owners: ResponseOwners, response_id: object, team_id: int | None) -> StoredOwner:
    """The owner of `response_id` if the team owns it; else the 404 an unknown id gets."""
    if not isinstance(response_id, str) or not 0 < len(response_id) <= MAX_RESPONSE_ID:
        raise ResponseNotFound(str(response_id))
    owner = await owners.find(response_id)
    if owner is None or team_id is None or owner.team_id != team_id:
        raise ResponseNotFound(response_id)
    return owner


def held_on(response_id: str, model: str) -> str:
    """How a 503 names the one backend a stored response lives on (never its URL)."""
    return f"Response `{response_id}` is held by one backend of `{model}`, which cannot serve it"


class StoredPlacement(Placement):
    """A call that stores a response (its owner recorded) or reaches one (pinned to it)."""

    def __init__(
        self,
        owners: ResponseOwners,
        created: StoredOwner | None,
        pinned: str | None = None,
        unavailable: str = "",
    ) -> None:
        self.owners = owners
        self.created = created
        self.pinned = pinned
        self.unavailable = unavailable
        self.recorded = False

    async def answered(self, backend: str, status: int) -> None:
        """Record the new response's owner before its id reaches the client."""
        created = self.created
        if created is None or status != 200:
            return
        # A background response's tokens are not known yet: whoever sees them settles it.
        await self.owners.record(replace(created, backend=backend), settled=not created.background)
        self.recorded = True

    async def relayed(self, metered: Metered) -> None:
        """A streamed background response seen to its end was metered by this call."""
        created = self.created
        if self.recorded and created is not None and created.background and metered.usage:
            await self.owners.settle(created.response_id)
