"""An httpx transport and client that connect only to addresses the guard checked."""

from __future__ import annotations

import httpx

from plumbline.outbound.guard import OutboundGuard


class GuardedTransport(httpx.BaseTransport):
    """Checks every request (each redirect too) and connects to the checked address itself."""

    def __init__(self, guard: OutboundGuard) -> None:
        self.guard = guard
        # No proxy from the environment: it would connect somewhere the guard never saw.
        self._transport = httpx.HTTPTransport(trust_env=False)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Resolve once, then send to the first checked address that accepts a connection."""
        target = self.guard.check_url(str(request.url))
        original = request.url
        # The Host header was set from the name already; TLS checks the certificate by name.
        request.extensions = {**request.extensions, "sni_hostname": target.url.host}
        failure: httpx.ConnectError | None = None
        for address in target.addresses:
            request.url = original.copy_with(host=str(address))
            try:
                return self._transport.handle_request(request)
            except httpx.ConnectError as error:
                failure = error
            finally:
                request.url = original
        assert failure is not None
        raise failure

    def close(self) -> None:
        """Close the pooled connections."""
        self._transport.close()


def guarded_client(guard: OutboundGuard) -> httpx.Client:
    """An httpx client for team-supplied URLs: guarded, no redirects, no proxy settings."""
    return httpx.Client(transport=GuardedTransport(guard), follow_redirects=False, trust_env=False)
