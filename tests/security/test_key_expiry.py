"""Key expiry over a real gateway: refused on time (also from the cache), named as expired."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.security.scoped_keys import metric
from tests.security.stack import SecurityStack, security_stack
from tests.support.waiting import wait_past_wall_clock

pytestmark = pytest.mark.xdist_group("security-key-expiry")
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
STARTED = ("plumbline_key_lookup_outcomes_total", ("outcome", "started"))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    with security_stack("postgres", tmp_path_factory.mktemp("expiry")) as running:
        yield running


def _chat(stack: SecurityStack, key: str) -> httpx.Response:
    return httpx.post(
        f"{stack.url}/v1/chat/completions",
        json=CHAT,
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )


def test_an_expired_key_is_refused_at_its_expiry_without_a_database_read(
    stack: SecurityStack,
) -> None:
    ends = (datetime.now(UTC) + timedelta(seconds=3)).replace(microsecond=0)
    with stack.api("admin") as admin:
        body = {"team": "alpha", "expires": ends.isoformat(), "note": "ci runner, ends soon"}
        cached, fresh = (admin.post("/api/admin/keys", json=body).json() for _ in range(2))
    assert datetime.fromisoformat(cached["expires_at"]) == ends
    assert _chat(stack, cached["key"]).status_code == 200  # verified and cached from now on
    lookups = metric(stack.url, *STARTED)
    wait_past_wall_clock(ends.timestamp(), what="the keys' expiry")

    refused = _chat(stack, cached["key"])
    assert refused.status_code == 401
    message = refused.json()["error"]["message"]
    assert f"expired at {ends.isoformat()}" in message and "keys create" in message
    assert "Invalid" not in message
    assert metric(stack.url, *STARTED) == lookups  # the cached verdict, compared to the clock
    with httpx.Client(
        base_url=stack.url, headers={"Authorization": f"Bearer {cached['key']}"}, timeout=30
    ) as client:
        api = client.get("/api/calls")
    assert api.status_code == 401 and "expired at" in api.json()["error"]["message"]

    never_cached = _chat(stack, fresh["key"])  # looked up in the database: the same answer
    assert never_cached.status_code == 401 and "expired at" in never_cached.text
    wrong_secret = _chat(stack, fresh["key"][:14] + "x" * 43)
    assert wrong_secret.status_code == 401
    assert "expired" not in wrong_secret.text  # expiry is told only to the key's holder

    with stack.api("admin") as admin:
        listed = admin.get("/api/admin/keys", params={"team": "alpha"}).json()["data"]
        rotated = admin.post(f"/api/admin/keys/{cached['prefix']}/rotate")
    row = next(k for k in listed if k["prefix"] == cached["prefix"])
    assert row["state"] == "expired" and row["note"] == "ci runner, ends soon"
    assert rotated.status_code == 400 and "expired at" in rotated.json()["error"]["message"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"expires": "2020-01-01"}, "in the past"),
        ({"expires": "0d"}, "1 to 3650"),
        ({"expires": "next tuesday"}, "is not a time"),
        ({"expires": "20000d"}, "1 to 3650"),
        ({"note": "x" * 501}, "it may have 500"),
        ({"note": "look \x1b[2J here"}, "control characters"),
        ({"scopes": ["inference", "superuser"]}, "Unknown scope `superuser`"),
        ({"scopes": []}, "at least one scope"),
        ({"scopes": ["read"], "admin": True}, "admin key holds every scope"),
        ({"scopes": ["read"] * 9}, "scopes"),
    ],
)
def test_bad_scopes_expiry_and_notes_are_clear_400s(
    stack: SecurityStack, body: dict[str, object], words: str
) -> None:
    with stack.api("admin") as admin:
        refused = admin.post("/api/admin/keys", json={"team": "alpha", **body})
    assert refused.status_code == 400, refused.text
    assert words in refused.json()["error"]["message"]


def test_creation_with_scopes_and_expiry_is_audited(stack: SecurityStack) -> None:
    with stack.api("admin") as admin:
        made = admin.post(
            "/api/admin/keys",
            json={"team": "beta", "scopes": ["evals", "read"], "expires": "90d", "note": "qa"},
        ).json()
        entries = admin.get("/api/admin/audit", params={"action": "key.create"}).json()["data"]
    entry = next(e for e in entries if e["target"] == made["prefix"])
    assert entry["details"]["scopes"] == ["read", "evals"]
    assert entry["details"]["expires_at"] == made["expires_at"].replace("Z", "+00:00")
    assert entry["details"]["note"] == "qa"
    assert entry["actor"] == f"key {stack.keys['admin'][3:13]} (platform)"
    days = datetime.fromisoformat(made["expires_at"]) - datetime.now(UTC)
    assert timedelta(days=89) < days <= timedelta(days=90)
