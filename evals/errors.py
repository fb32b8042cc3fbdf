"""Errors the eval services raise; the API maps them to 4xx, the CLI prints them."""

from __future__ import annotations


class EvalServiceError(Exception):
    """A request the eval services cannot carry out; the message says what to do instead."""

    status = 400

    def __init__(self, message: str, param: str | None = None) -> None:
        self.message = message
        self.param = param
        super().__init__(message)


class NotFoundError(EvalServiceError):
    """The suite, run or paraphrase does not exist or is not visible to the caller."""

    status = 404


class ConflictError(EvalServiceError):
    """The request clashes with the current state (e.g. approving a stale paraphrase)."""

    status = 409


class ForbiddenError(EvalServiceError):
    """The caller's team may not do this."""

    status = 403
