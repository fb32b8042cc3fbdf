"""The outbound-URL guard: strict parsing, blocked ranges, pinned connections, no redirects."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Iterator

import aiohttp
import pytest

from plumbline.child_process import free_port
from plumbline.outbound import (
    GuardedResolver,
    OutboundGuard,
    OutboundRefused,
    StaticResolver,
    blocked_reason,
    guarded_http,
    guarded_session,
    parse_outbound_url,
)
from tests.support.listener import Listener

BLOCKED = {
    "127.0.0.1": "loopback",
    "127.5.5.5": "loopback",
    "::1": "loopback",
    "10.1.2.3": "private",
    "172.16.0.9": "private",
    "192.168.1.1": "private",
    "fc00::1": "private",
    "169.254.1.1": "link-local",
    "fe80::1": "link-local",
    "169.254.169.254": "metadata",
    "fd00:ec2::254": "metadata",
    "100.64.0.1": "cgnat",
    "100.127.255.254": "cgnat",
    "0.0.0.0": "unspecified",
    "::": "unspecified",
    "224.0.0.1": "multicast",
    "ff02::1": "multicast",
    "::ffff:127.0.0.1": "ipv4-mapped",
    "::ffff:8.8.8.8": "ipv4-mapped",
    "64:ff9b::a9fe:a9fe": "ipv4-embedded metadata",
    "2002:7f00:1::": "ipv4-embedded loopback",
}
PUBLIC = ("8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "100.128.0.1")


@pytest.mark.parametrize(("address", "reason"), sorted(BLOCKED.items()))
def test_internal_addresses_are_blocked_with_their_reason(address: str, reason: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "file:///etc/passwd",
        "http://user:pw@example.com/",
        "http://example.com@169.254.169.254/",
        "http:///path",
        "http://exa mple.com/",
        "http://example.com\\@evil.test/",
        "http://127.1/",
        "http://2130706433/",
        "http://example.com:99999/",
        "http://bad_host.example/",
        "http://ex\u00e4mple.com/",
        "http://example.com/" + "a" * 3000,
    ],
)
def test_ambiguous_or_non_http_urls_are_refused_by_the_parser(url: str) -> None:
    with pytest.raises(OutboundRefused) as refused:
        parse_outbound_url(url)
    assert refused.value.error_class == "invalid_url"


def test_the_parser_keeps_scheme_host_and_port() -> None:
    parsed = parse_outbound_url("HTTPS://Hooks.Example.COM/x?y=1")
    assert (parsed.scheme, parsed.host, parsed.port) == ("https", "hooks.example.com", 443)
    assert parse_outbound_url("http://[2606:4700::1]:8080/").host == "2606:4700::1"


def test_a_name_that_resolves_to_metadata_is_refused() -> None:
    guard = OutboundGuard(resolver=StaticResolver({"hooks.example.com": ["169.254.169.254"]}))
    with pytest.raises(OutboundRefused) as refused:
        guard.check_url("https://hooks.example.com/alert")
    assert refused.value.error_class == "blocked_address"
    assert "169.254.169.254 (metadata)" in refused.value.message


def test_one_internal_answer_among_public_ones_refuses_the_name() -> None:
    guard = OutboundGuard(resolver=StaticResolver({"rebind.test": ["8.8.8.8", "10.0.0.1"]}))
    with pytest.raises(OutboundRefused):
        guard.check_url("http://rebind.test/")


def test_a_public_name_passes_and_keeps_its_addresses() -> None:
    guard = OutboundGuard(resolver=StaticResolver({"hooks.example.com": ["8.8.8.8"]}))
    target = guard.check_url("https://hooks.example.com/x")
    assert target.addresses == (ipaddress.ip_address("8.8.8.8"),)
    assert not target.allowlisted


def test_an_allowlisted_host_may_resolve_anywhere() -> None:
    guard = OutboundGuard(
        ["Hooks.Internal.test"], StaticResolver({"hooks.internal.test": ["10.0.0.5"]})
    )
    assert guard.check_url("http://hooks.internal.test/").allowlisted


@pytest.fixture
def listener() -> Iterator[Listener]:
    """The attacker's target on loopback."""
    with Listener() as running:
        yield running


def test_the_client_never_connects_to_a_refused_address(listener: Listener) -> None:
    guard = OutboundGuard(resolver=StaticResolver({"metadata.test": ["127.0.0.1"]}))
    with guarded_http(guard) as http, pytest.raises(OutboundRefused):
        http.request("POST", f"http://metadata.test:{listener.port}/latest", json={}, timeout_s=5)
    assert listener.requests() == []


def test_an_internal_ip_literal_is_refused_though_aiohttp_skips_the_resolver_for_it(
    listener: Listener,
) -> None:
    with guarded_http(OutboundGuard()) as http:
        for host in ("127.0.0.1", "[::ffff:127.0.0.1]"):
            with pytest.raises(OutboundRefused) as refused:
                http.request("GET", f"http://{host}:{listener.port}/", timeout_s=5)
            assert refused.value.error_class == "blocked_address"
    assert listener.requests() == []


def test_a_url_the_strict_parser_refuses_is_refused_before_connecting(listener: Listener) -> None:
    resolver = StaticResolver({"hooks.internal.test": ["127.0.0.1"]})
    with guarded_http(OutboundGuard(["hooks.internal.test"], resolver)) as http:
        url = f"http://user:pw@hooks.internal.test:{listener.port}/"
        with pytest.raises(OutboundRefused) as refused:
            http.request("GET", url, timeout_s=5)
        assert refused.value.error_class == "invalid_url"
    assert listener.requests() == []


def test_the_client_connects_to_the_checked_address_with_the_name_as_host(
    listener: Listener,
) -> None:
    resolver = StaticResolver({"hooks.internal.test": ["127.0.0.1"]})
    with guarded_http(OutboundGuard(["hooks.internal.test"], resolver)) as http:
        url = f"http://hooks.internal.test:{listener.port}/in"
        reply = http.request("POST", url, json={"a": 1}, timeout_s=5)
    assert reply.status == 200
    [heard] = listener.requests()
    assert heard.path == "/in"
    assert heard.headers["Host"] == f"hooks.internal.test:{listener.port}"


def test_redirects_are_not_followed_and_each_followed_one_is_checked_again(
    listener: Listener,
) -> None:
    listener.status, listener.location = 302, "http://metadata.test/latest/meta-data/"
    resolver = StaticResolver(
        {"hooks.internal.test": ["127.0.0.1"], "metadata.test": ["127.0.0.1"]}
    )
    guard = OutboundGuard(["hooks.internal.test"], resolver)
    url = f"http://hooks.internal.test:{listener.port}/"
    with guarded_http(guard) as http:
        assert http.request("GET", url, timeout_s=5).status == 302

    async def followed() -> None:
        async with guarded_session(guard) as session:
            await session.get(url, allow_redirects=True)

    with pytest.raises(OutboundRefused):
        asyncio.run(followed())
    assert len(listener.requests()) == 2


def test_proxy_environment_variables_are_ignored(
    listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Listener() as proxy:
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
            monkeypatch.setenv(name, proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        resolver = StaticResolver({"hooks.internal.test": ["127.0.0.1"]})
        with guarded_http(OutboundGuard(["hooks.internal.test"], resolver)) as http:
            http.request("GET", f"http://hooks.internal.test:{listener.port}/direct", timeout_s=5)
        assert proxy.requests() == []
    assert [h.path for h in listener.requests()] == ["/direct"]


def test_the_resolver_refuses_internal_names_and_pins_allowed_ones(listener: Listener) -> None:
    resolver = StaticResolver({"hooks.internal.test": ["127.0.0.1"], "evil.test": ["127.0.0.1"]})
    guard = OutboundGuard(["hooks.internal.test"], resolver)

    async def calls() -> int:
        # The resolver alone, without the session's URL check: it still refuses the name.
        connector = aiohttp.TCPConnector(resolver=GuardedResolver(guard))
        async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:
            with pytest.raises(OutboundRefused):
                await session.get(f"http://evil.test:{listener.port}/")
            async with session.get(f"http://hooks.internal.test:{listener.port}/ok") as response:
                return response.status

    assert asyncio.run(calls()) == 200
    assert [h.path for h in listener.requests()] == ["/ok"]


def test_connection_errors_still_surface_as_aiohttp_errors() -> None:
    resolver = StaticResolver({"hooks.internal.test": ["127.0.0.1"]})
    closed = free_port()
    with guarded_http(OutboundGuard(["hooks.internal.test"], resolver)) as http:
        with pytest.raises(aiohttp.ClientConnectorError):
            http.request("GET", f"http://hooks.internal.test:{closed}/", timeout_s=5)
