"""Refuse credentials written into a configured URL: they would be stored and shown with it."""

from __future__ import annotations

from urllib.parse import urlsplit


def refuse_userinfo(url: str, what: str) -> str:
    """The URL unchanged; ValueError (not quoting the URL, which holds it) if it has userinfo."""
    try:
        netloc = urlsplit(url).netloc
    except ValueError as error:
        raise ValueError(f"{what} is not a valid URL") from error
    if "@" in netloc:
        raise ValueError(
            f"{what} must not carry credentials (user:password@host): the URL is stored with "
            "every call and shown in /metrics and logs. Put the secret in `api_key` instead."
        )
    return url
