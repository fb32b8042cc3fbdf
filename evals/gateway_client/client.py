"""GatewayClient: chat completions and model info from the gateway over httpx."""

from __future__ import annotations

from types import TracebackType
from typing import Any

import httpx

from evals.gateway_client.messages import ChatRequest, Completion, GatewayCallError

CALL_ID_HEADER = "x-plumbline-call-id"


class GatewayClient:
    """One connection pool to the gateway; use as `async with GatewayClient(...) as client`."""

    def __init__(self, base_url: str, api_key: str, *, timeout_s: float = 300.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
        )

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
        await self._http.aclose()

    async def chat(self, request: ChatRequest) -> Completion:
        """Send one chat completion; raises GatewayCallError on any failure."""
        headers = {"X-Plumbline-Feature": request.feature, "X-Plumbline-Team": request.team}
        try:
            response = await self._http.post(
                "/v1/chat/completions", json=request.body(), headers=headers
            )
        except httpx.HTTPError as error:
            raise GatewayCallError(None, f"{type(error).__name__}: {error}") from None
        call_id = response.headers.get(CALL_ID_HEADER)
        payload = _json(response)
        if response.status_code >= 400:
            raise GatewayCallError(response.status_code, _error_message(payload, response), call_id)
        try:
            choice = payload["choices"][0]
            usage = payload.get("usage") or {}
            return Completion(
                text=choice["message"].get("content") or "",
                call_id=call_id,
                finish_reason=choice.get("finish_reason"),
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
            )
        except (KeyError, IndexError, TypeError, AttributeError):
            raise GatewayCallError(
                502, f"unexpected completion body: {response.text[:200]}", call_id
            ) from None

    async def complete(
        self, path: str, body: dict[str, Any], *, feature: str, team: str
    ) -> Completion:
        """Send a raw chat or text completion body to `path` (e.g. a production request)."""
        headers = {"X-Plumbline-Feature": feature, "X-Plumbline-Team": team}
        try:
            response = await self._http.post(path, json=body, headers=headers)
        except httpx.HTTPError as error:
            raise GatewayCallError(None, f"{type(error).__name__}: {error}") from None
        call_id = response.headers.get(CALL_ID_HEADER)
        payload = _json(response)
        if response.status_code >= 400:
            raise GatewayCallError(response.status_code, _error_message(payload, response), call_id)
        try:
            choice = payload["choices"][0]
            message = choice.get("message")
            text = message.get("content") if message is not None else choice.get("text")
            usage = payload.get("usage") or {}
            return Completion(
                text=text or "",
                call_id=call_id,
                finish_reason=choice.get("finish_reason"),
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
            )
        except (KeyError, IndexError, TypeError, AttributeError):
            raise GatewayCallError(
                502, f"unexpected completion body: {response.text[:200]}", call_id
            ) from None

    async def max_model_lens(self) -> dict[str, int | None]:
        """Each model the gateway serves and its context size as the backend reports it."""
        try:
            response = await self._http.get("/v1/models")
        except httpx.HTTPError as error:
            raise GatewayCallError(None, f"{type(error).__name__}: {error}") from None
        payload = _json(response)
        if response.status_code >= 400:
            raise GatewayCallError(response.status_code, _error_message(payload, response))
        found: dict[str, int | None] = {}
        for entry in payload.get("data") or []:
            length = entry.get("max_model_len")
            found[str(entry.get("id"))] = int(length) if isinstance(length, int) else None
        return found


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return {}


def _error_message(payload: Any, response: httpx.Response) -> str:
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        return str(payload["error"].get("message") or response.reason_phrase)
    if isinstance(payload, dict) and "detail" in payload:
        return str(payload["detail"])
    return f"HTTP {response.status_code}: {response.text[:200]}"
