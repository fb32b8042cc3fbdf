"""Failures of an upstream call, named by when they happen so callers can pick a reaction."""

from __future__ import annotations


class UpstreamError(Exception):
    """Something went wrong talking to a backend."""


class UpstreamConnectError(UpstreamError):
    """No connection could be opened (refused, unreachable, DNS, TLS handshake)."""

    def __init__(self, address: str, os_error: OSError) -> None:
        super().__init__(f"Cannot connect to host {address} [{os_error.strerror or os_error}]")
        self.address = address
        self.os_error = os_error


class UpstreamDisconnected(UpstreamError):
    """The connection ended, or the backend sent no valid response head, before a response."""

    def __init__(self, message: str, *, request_written: bool = True) -> None:
        super().__init__(message)
        # Whether any byte of the request went to the socket: only if none did may the call
        # go to another backend, since the first one may otherwise act on it.
        self.request_written = request_written


class UpstreamPayloadError(UpstreamError):
    """The response body was cut short or malformed after its head arrived."""


class UpstreamTimeout(UpstreamError, TimeoutError):
    """Connecting, or the gap between the backend's bytes, took longer than allowed."""


class UpstreamRefused(UpstreamError):
    """The response broke a bound or a framing rule (too large, 101, bad Transfer-Encoding)."""


class UpstreamPoolTimeout(UpstreamTimeout):
    """Every connection the backend may have was busy for longer than the pool's wait."""
