"""OpenAI-shaped error bodies, in the same form vLLM uses, for errors the gateway raises itself."""

from __future__ import annotations

import orjson

_TYPES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    408: "RequestTimeoutError",
    413: "RequestTooLargeError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    500: "InternalServerError",
    502: "BadGatewayError",
    503: "ServiceUnavailableError",
    504: "GatewayTimeoutError",
}


class GatewayError(Exception):
    """An error answered to the client in OpenAI's shape and recorded with the call."""

    # Extra response headers (Retry-After on a 429), as raw ASGI header pairs.
    headers: tuple[tuple[bytes, bytes], ...] = ()

    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(status, message, param)
        self.status = status
        self.message = message
        self.param = param

    @property
    def error_type(self) -> str:
        """The `type` field, named after the status like vLLM does."""
        return _TYPES.get(self.status, "Error")

    def body(self) -> bytes:
        """The JSON body of the error."""
        return error_body(self.status, self.message, self.param)


def error_body(status: int, message: str, param: str | None = None) -> bytes:
    """`{"error": {message, type, param, code}}` as bytes."""
    payload = {
        "error": {
            "message": message,
            "type": _TYPES.get(status, "Error"),
            "param": param,
            "code": status,
        }
    }
    return orjson.dumps(payload)
