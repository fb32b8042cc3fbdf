"""Placement: where a call must be served, and what its kind does around the answer."""

from __future__ import annotations

from gateway.metering.metered import Metered


class Placement:
    """Any healthy backend and nothing around the answer: what most calls get.

    A kind whose calls reach state one backend holds (a stored response) pins the call there
    and hooks the answer; the forwarder calls the hooks and knows nothing of why.
    """

    # The URL of the backend the call must go to, or None for the least busy healthy one.
    pinned: str | None = None
    # What the 503 says when the pinned backend cannot serve the call.
    unavailable: str = ""

    async def answered(self, backend: str, status: int) -> None:
        """Before an answer from `backend` is relayed: nothing of it has reached the client."""
        return

    async def relayed(self, metered: Metered) -> None:
        """After the answer was relayed whole."""
        return


ANYWHERE = Placement()
