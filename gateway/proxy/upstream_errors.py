"""Errors in what the backend sent, as opposed to what the client sent."""

from __future__ import annotations


class UpstreamProtocolError(Exception):
    """The backend sent something that is not the OpenAI protocol (garbage, cut-off JSON)."""
