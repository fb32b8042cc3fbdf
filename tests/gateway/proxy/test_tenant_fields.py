"""Per-team cache salts and the media URLs a GPU host may be asked to fetch."""

from __future__ import annotations

import pytest

from gateway.errors import GatewayError
from gateway.proxy.tenant_fields import check_media_urls, team_cache_salt

DOMAINS = ("media.example",)


def test_salts_differ_by_team_and_client_salt_and_suit_vllm() -> None:
    salts = {
        team_cache_salt("pepper", team, client)
        for team in (1, 2)
        for client in (None, "user-1", "user-2")
    }
    assert len(salts) == 6
    assert team_cache_salt("pepper", 1, None) == team_cache_salt("pepper", 1, None)
    assert team_cache_salt("other-pepper", 1, None) not in salts
    # vLLM refuses salts over 128 characters or with '@', '/', '\\' or NUL.
    assert all(len(s) <= 128 and not set(s) & set("@/\\\x00") for s in salts)


def _message(url: str) -> dict[str, object]:
    part = {"type": "image_url", "image_url": {"url": url}}
    return {"messages": [{"role": "user", "content": [part]}]}


@pytest.mark.parametrize(
    "url",
    [
        "data:image/png;base64,AAAA",
        "DaTa:image/png;base64,AAAA",
        "https://media.example/a.png",
        "http://MEDIA.example:8080/a.png",
    ],
)
def test_inline_and_allowed_media_pass(url: str) -> None:
    check_media_urls(_message(url), DOMAINS)


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data",
        "https://media.example.attacker.test/a.png",
        "http://media.example@127.0.0.1/",
        "http://media.example\\@127.0.0.1/",
        "http://127.0.0.1/#@media.example",
        "file:///etc/passwd",
        "ftp://media.example/a.png",
        "//media.example/a.png",
        "http://[::1",
        "media.example/a.png",
    ],
)
def test_other_media_urls_are_refused(url: str) -> None:
    with pytest.raises(GatewayError) as refused:
        check_media_urls(_message(url), DOMAINS)
    assert (refused.value.status, refused.value.param) == (
        400,
        "messages[0].content[0].image_url.url",
    )


def test_no_domains_means_only_inline_media() -> None:
    with pytest.raises(GatewayError):
        check_media_urls(_message("https://media.example/a.png"), ())
