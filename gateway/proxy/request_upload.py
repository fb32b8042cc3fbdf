"""RequestUpload: a request body its call kind reads as it arrives (an upload), not whole."""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from typing import Any

from gateway.config import ModelConfig
from gateway.metering.metered import Metered
from gateway.upstream.streamed_body import StreamedBody


class RequestUpload(StreamedBody):
    """The small fields of an upload, read first; the rest is streamed upstream once routed."""

    # The fields the gateway reads and routes by, as `dict` values (strings, or lists).
    fields: dict[str, Any]
    # Set once the client's body was read to its end: until then only the upload reads it.
    finished: asyncio.Event

    @abstractmethod
    def stored(self) -> bytes:
        """What a record that keeps bodies keeps of this request."""

    @abstractmethod
    def upstream(self, payload: dict[str, Any], model: ModelConfig) -> StreamedBody:
        """The body to send `model`'s backend, with `payload` as its (confined) fields."""

    def completed(self, metered: Metered) -> Metered:
        """The response's measurements, with what only the upload showed."""
        return metered
