"""Rate limits through a real gateway: per team and per key, 429s in OpenAI's shape."""

from __future__ import annotations

import httpx
import openai
import pytest

from tests.security.stack import SecurityStack
from tests.support.waiting import wait_until

pytestmark = pytest.mark.xdist_group("security-rate-limits")
MESSAGES = [{"role": "user", "content": "What is the governing law of the agreement?"}]


def _chat(stack: SecurityStack, key: str, max_tokens: int = 8) -> httpx.Response:
    return httpx.post(
        f"{stack.url}/v1/chat/completions",
        json={"model": "tiny", "messages": MESSAGES, "max_tokens": max_tokens},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )


def _calls_until(
    stack: SecurityStack, team: str, params: dict[str, str], count: int
) -> list[dict[str, object]]:
    """The team's calls matching `params`, once `count` are written (records land async)."""
    with stack.api(team) as api:

        def rows() -> list[dict[str, object]]:
            found: list[dict[str, object]] = api.get("/api/calls", params=params).json()["data"]
            return found

        try:
            wait_until(lambda: len(rows()) >= count, timeout=10, what=f"{count} calls")
        except AssertionError:
            pass  # the caller's assertion on the rows says what is missing
        return rows()


def test_team_requests_per_minute_apply_at_once_and_answer_429(stack: SecurityStack) -> None:
    with stack.api("admin") as admin:
        changed = admin.patch("/api/admin/teams/beta", json={"requests_per_minute": 3})
    assert changed.status_code == 200 and changed.json()["requests_per_minute"] == 3
    statuses = [_chat(stack, stack.keys["beta"]).status_code for _ in range(3)]
    assert statuses == [200, 200, 200]
    refused = _chat(stack, stack.keys["beta"])
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "RateLimitError" and error["code"] == 429
    assert "requests per minute on this team (limit 3)" in error["message"]
    assert int(refused.headers["retry-after"]) >= 1
    assert int(refused.headers["retry-after-ms"]) > 1000
    assert refused.headers["x-ratelimit-limit-requests"] == "3"
    with stack.openai("beta") as client, pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=4)  # type: ignore[arg-type]
    rows = _calls_until(stack, "beta", {"status": "429"}, 2)
    assert len(rows) == 2 and all(r["error_type"] == "RateLimitError" for r in rows)
    with stack.api("admin") as admin:
        admin.patch("/api/admin/teams/beta", json={"requests_per_minute": None})
    assert _chat(stack, stack.keys["beta"]).status_code == 200


def test_a_keys_tokens_per_minute_are_charged_after_each_call(stack: SecurityStack) -> None:
    with stack.api("admin") as admin:
        created = admin.post(
            "/api/admin/keys", json={"team": "alpha", "name": "batch", "tokens_per_minute": 20}
        )
    assert created.status_code == 201
    key = created.json()["key"]
    first = _chat(stack, key, max_tokens=32)
    assert first.status_code == 200
    used = first.json()["usage"]["total_tokens"]
    assert used > 20
    refused = _chat(stack, key)
    assert refused.status_code == 429
    assert "tokens per minute on this key (limit 20)" in refused.json()["error"]["message"]
    # Other keys of the team are not limited by this key's bucket.
    assert _chat(stack, stack.keys["alpha"]).status_code == 200


def test_limits_set_on_a_key_through_the_api_apply_at_once(stack: SecurityStack) -> None:
    prefix = stack.keys["alpha"][3:13]
    with stack.api("admin") as admin:
        limited = admin.patch(f"/api/admin/keys/{prefix}", json={"requests_per_minute": 1})
    assert limited.status_code == 200 and limited.json()["requests_per_minute"] == 1
    assert _chat(stack, stack.keys["alpha"]).status_code == 200
    assert _chat(stack, stack.keys["alpha"]).status_code == 429
    with stack.api("admin") as admin:
        admin.patch(f"/api/admin/keys/{prefix}", json={"requests_per_minute": None})
    assert _chat(stack, stack.keys["alpha"]).status_code == 200
