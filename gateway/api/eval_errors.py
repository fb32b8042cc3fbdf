"""Translate eval service errors into the gateway's OpenAI-shaped errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from evals.errors import EvalServiceError
from evals.suite import SuiteError
from gateway.errors import GatewayError


@contextmanager
def gateway_errors() -> Iterator[None]:
    """Re-raise service and suite validation errors as GatewayError (4xx)."""
    try:
        yield
    except EvalServiceError as error:
        raise GatewayError(error.status, error.message, error.param) from None
    except SuiteError as error:
        first = error.problems[0].path if error.problems else None
        raise GatewayError(400, f"Invalid suite:\n{error}", first) from None
