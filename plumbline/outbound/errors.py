"""OutboundRefused: a URL or address the guard will not connect to, with a fixed class."""

from __future__ import annotations


class OutboundRefused(Exception):
    """Refused before connecting; `error_class` is one fixed word, safe to store and show."""

    def __init__(self, error_class: str, message: str) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message
