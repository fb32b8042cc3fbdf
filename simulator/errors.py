"""vLLM-shaped errors: `{"error": {"message", "type", "param", "code"}}` with vLLM's type names."""

from __future__ import annotations

from http import HTTPStatus
from types import MappingProxyType
from typing import Any

import orjson
from starlette.responses import Response

_TYPE_BY_STATUS = MappingProxyType(
    {
        400: "BadRequestError",
        401: "UnauthorizedError",
        403: "ForbiddenError",
        404: "NotFoundError",
        422: "UnprocessableEntityError",
        429: "TooManyRequestsError",
        500: "InternalServerError",
        501: "NotImplementedError",
        503: "ServiceUnavailableError",
    }
)
_NO_VALUE = object()
ENGINE_DEAD_MESSAGE = "EngineCore encountered an issue. See stack trace (above) for the root cause."


def error_type_for(status: int) -> str:
    """vLLM's error `type` for an HTTP status."""
    known = _TYPE_BY_STATUS.get(status)
    if known is not None:
        return known
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def with_parameter(message: str, parameter: str, value: Any = _NO_VALUE) -> str:
    """Append vLLM 0.32's `(parameter=..., value=...)` suffix to a validation message."""
    if value is _NO_VALUE:
        return f"{message} (parameter={parameter})"
    return f"{message} (parameter={parameter}, value={value})"


def error_body(message: str, err_type: str, param: str | None, code: int) -> dict[str, Any]:
    """The error object vLLM sends, both as a body and inside an SSE `data:` event."""
    return {"error": {"message": message, "type": err_type, "param": param, "code": code}}


class ApiError(Exception):
    """An error response to send instead of a result."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        err_type: str | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.err_type = err_type or error_type_for(status)
        self.param = param

    def body(self) -> dict[str, Any]:
        """The JSON error object."""
        return error_body(self.message, self.err_type, self.param, self.status)

    def response(self) -> Response:
        """The HTTP response carrying this error."""
        return Response(orjson.dumps(self.body()), self.status, media_type="application/json")


def engine_dead_error() -> ApiError:
    """What vLLM answers once its engine core has died."""
    return ApiError(ENGINE_DEAD_MESSAGE, status=500)


def injected_error(status: int) -> ApiError:
    """An error produced by fault injection, shaped like vLLM's for that status."""
    messages = {
        429: "The server is overloaded. Please retry later.",
        500: ENGINE_DEAD_MESSAGE,
        503: "The engine is temporarily unavailable. Please retry later.",
    }
    return ApiError(messages.get(status, f"Simulated failure (status {status})."), status=status)
