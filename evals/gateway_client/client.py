"""GatewayClient: chat completions and model info from the gateway over aiohttp.

aiohttp, not httpx: an eval sample is one short call, and httpx spent about 2.5 ms of CPU on
each (a worker's largest cost per sample) where aiohttp spends about 0.2 ms
(`python -m bench.http_clients`, "HTTP clients" in docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import Any

import aiohttp
import orjson

from evals.gateway_client.messages import ChatRequest, Completion, GatewayCallError

CALL_ID_HEADER = "x-plumbline-call-id"
TRACE_LINK_HEADER = "X-Plumbline-Trace-Link"
JSON_HEADERS = {"Content-Type": "application/json"}


@dataclass(frozen=True, slots=True)
class _Reply:
    """A response read whole: status, reason, call id header, body and its JSON (or {})."""

    status: int
    reason: str
    call_id: str | None
    body: bytes
    payload: Any

    @property
    def text(self) -> str:
        return self.body.decode(errors="replace")


class GatewayClient:
    """One connection pool to the gateway; use as `async with GatewayClient(...) as client`.

    The session is opened on first use, on the loop that uses it, so the client can be built
    outside a coroutine (a route handler, a fixture) and handed to one.
    """

    def __init__(self, base_url: str, api_key: str, *, timeout_s: float = 300.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"}
        # Like httpx's Timeout(timeout_s, connect=10): a bound per read, not on the whole call.
        self._timeout = aiohttp.ClientTimeout(total=None, connect=10.0, sock_read=timeout_s)
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> GatewayClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def chat(self, request: ChatRequest) -> Completion:
        """Send one chat completion; raises GatewayCallError on any failure."""
        reply = await self._post(
            "/v1/chat/completions",
            request.body(),
            feature=request.feature,
            team=request.team,
            trace_link=request.trace_link,
        )
        try:
            choice = reply.payload["choices"][0]
            return _completion(reply, choice["message"].get("content"), choice)
        except (KeyError, IndexError, TypeError, AttributeError):
            raise _unexpected(reply) from None

    async def complete(
        self, path: str, body: dict[str, Any], *, feature: str, team: str
    ) -> Completion:
        """Send a raw chat or text completion body to `path` (e.g. a production request)."""
        reply = await self._post(path, body, feature=feature, team=team)
        try:
            choice = reply.payload["choices"][0]
            message = choice.get("message")
            text = message.get("content") if message is not None else choice.get("text")
            return _completion(reply, text, choice)
        except (KeyError, IndexError, TypeError, AttributeError):
            raise _unexpected(reply) from None

    async def max_model_lens(self) -> dict[str, int | None]:
        """Each model the gateway serves and its context size as the backend reports it."""
        reply = await self._send("GET", "/v1/models")
        if reply.status >= 400:
            raise GatewayCallError(reply.status, _error_message(reply))
        found: dict[str, int | None] = {}
        payload = reply.payload if isinstance(reply.payload, dict) else {}
        for entry in payload.get("data") or []:
            length = entry.get("max_model_len")
            found[str(entry.get("id"))] = int(length) if isinstance(length, int) else None
        return found

    async def _post(
        self,
        path: str,
        body: dict[str, Any],
        *,
        feature: str,
        team: str,
        trace_link: str | None = None,
    ) -> _Reply:
        headers = {"X-Plumbline-Feature": feature, "X-Plumbline-Team": team, **JSON_HEADERS}
        if trace_link is not None:
            headers[TRACE_LINK_HEADER] = trace_link
        reply = await self._send("POST", path, data=orjson.dumps(body), headers=headers)
        if reply.status >= 400:
            raise GatewayCallError(reply.status, _error_message(reply), reply.call_id)
        return reply

    async def _send(self, method: str, path: str, **options: Any) -> _Reply:
        # A path is appended to the base URL: one not starting with "/" (say "@host/x") would
        # move the authority, and the eval key with it, to another host.
        if not path.startswith("/"):
            raise GatewayCallError(None, f"refused: the path {path[:80]!r} must start with '/'")
        try:
            async with self._opened().request(
                method, f"{self.base_url}{path}", allow_redirects=False, **options
            ) as response:
                body = await response.read()
                return _Reply(
                    response.status,
                    response.reason or "",
                    response.headers.get(CALL_ID_HEADER),
                    body,
                    _json(body),
                )
        except (aiohttp.ClientError, TimeoutError) as error:
            raise GatewayCallError(None, f"{type(error).__name__}: {error}") from None

    def _opened(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                timeout=self._timeout,
                connector=aiohttp.TCPConnector(limit=0),
                # No proxy or netrc from the environment (httpx read them): the gateway is the
                # destination, and trust_env would read ~/.netrc on every call.
                trust_env=False,
            )
        return self._session


def _completion(reply: _Reply, text: Any, choice: dict[str, Any]) -> Completion:
    usage = reply.payload.get("usage") or {}
    return Completion(
        text=text or "",
        call_id=reply.call_id,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
    )


def _unexpected(reply: _Reply) -> GatewayCallError:
    return GatewayCallError(502, f"unexpected completion body: {reply.text[:200]}", reply.call_id)


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}


def _error_message(reply: _Reply) -> str:
    payload = reply.payload
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        return str(payload["error"].get("message") or reply.reason)
    if isinstance(payload, dict) and "detail" in payload:
        return str(payload["detail"])
    return f"HTTP {reply.status}: {reply.text[:200]}"
