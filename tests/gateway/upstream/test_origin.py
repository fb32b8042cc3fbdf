"""Backend URLs are taken apart once: host, port, path prefix, Host header, TLS."""

from __future__ import annotations

import pytest

from gateway.upstream.headers import Headers
from gateway.upstream.origin import parse_origin


def test_a_plain_url() -> None:
    origin = parse_origin("http://127.0.0.1:8000")
    assert (origin.host, origin.port, origin.prefix) == ("127.0.0.1", 8000, "")
    assert origin.host_header == "127.0.0.1:8000" and origin.ssl is None


def test_https_defaults_and_a_prefix() -> None:
    origin = parse_origin("https://user:secret@vllm.example:443/serve/")
    assert (origin.host, origin.port, origin.prefix) == ("vllm.example", 443, "/serve")
    assert origin.host_header == "vllm.example:443"
    assert origin.ssl is not None
    assert parse_origin("https://vllm.example").port == 443
    assert parse_origin("http://[::1]:9000").host_header == "[::1]:9000"


@pytest.mark.parametrize("url", ["ftp://host", "http://", "http://host/a?b=1", "host:80"])
def test_what_is_not_a_backend_url(url: str) -> None:
    with pytest.raises(ValueError, match="backend URL"):
        parse_origin(url)


def test_headers_ignore_case_and_join_repeats() -> None:
    headers = Headers([(b"Content-Type", b"text/plain"), (b"Vary", b"a"), (b"vary", b"b")])
    assert headers.get("content-type") == "text/plain"
    assert headers["VARY"] == "a, b"
    assert "Content-TYPE" in headers and "x" not in headers
    assert headers.get("missing") is None and headers.get("missing", "d") == "d"
    assert sorted(headers) == ["content-type", "vary"] and len(headers) == 2
