"""StreamedBody: a request body sent upstream as it is produced (an upload), never replayed."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator


class StreamedBody(ABC):
    """A body whose bytes arrive while it is sent (chunked upstream); it can be sent once."""

    # The body's media type, sent upstream as Content-Type.
    content_type: str
    # Set once any byte was taken to be sent: from then on it cannot go to another backend.
    started: bool = False

    @abstractmethod
    def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes in order; raises what made it end early (a refusal, a disconnect)."""


def replayable(body: bytes | StreamedBody) -> bool:
    """Whether `body` could still be sent (again) to another backend."""
    return isinstance(body, bytes) or not body.started
