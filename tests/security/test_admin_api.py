"""The admin API: every route needs an admin key; keys created, rotated, revoked at once."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from plumbline.child_process import plumbline_command
from plumbline.db import create_db_engine
from tests.security.stack import SecurityStack
from tests.support.gateway_process import TEST_PEPPER
from tests.support.waiting import wait_until

pytestmark = pytest.mark.xdist_group("security-admin")
MESSAGES = [{"role": "user", "content": "What is the governing law?"}]


def _admin_operations(stack: SecurityStack) -> list[tuple[str, str]]:
    schema = httpx.get(f"{stack.url}/api/openapi.json").json()
    found = [
        (method.upper(), path)
        for path, item in schema["paths"].items()
        if path.startswith("/api/admin")
        for method in item
    ]
    assert len(found) >= 10, found  # keys x5, teams x2, end-users, retention, audit
    return found


def _filled(path: str) -> str:
    return path.replace("{prefix}", "0123456789").replace("{team}", "alpha")


def _chat(stack: SecurityStack, key: str) -> int:
    response = httpx.post(
        f"{stack.url}/v1/chat/completions",
        json={"model": "tiny", "messages": MESSAGES, "max_tokens": 4},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    return response.status_code


@pytest.mark.parametrize(("who", "status"), [(None, 401), ("alpha", 403), ("beta", 403)])
def test_every_admin_route_refuses_non_admin_keys(
    stack: SecurityStack, who: str | None, status: int
) -> None:
    with stack.api(who) as client:
        for method, path in _admin_operations(stack):
            body: dict[str, Any] | None = {} if method in ("POST", "PATCH") else None
            response = client.request(method, _filled(path), json=body)
            assert response.status_code == status, (method, path, response.text)
            assert set(response.json()["error"]) == {"message", "type", "param", "code"}


def test_created_keys_are_shown_once_and_stored_as_hashes(stack: SecurityStack) -> None:
    with stack.api("admin") as admin:
        created = admin.post("/api/admin/keys", json={"team": "gamma", "name": "ci"})
        listed = admin.get("/api/admin/keys", params={"team": "gamma"})
    assert created.status_code == 201
    key = created.json()["key"]
    secret = key.split(".", 1)[1]
    assert [k["prefix"] for k in listed.json()["data"]] == [created.json()["prefix"]]
    assert secret not in listed.text
    assert _chat(stack, key) == 200
    engine = create_db_engine(stack.database_url)
    with engine.connect() as connection:
        dump = " ".join(
            str(row) for row in connection.execute(text("SELECT * FROM api_keys")).all()
        )
        audit = " ".join(str(r) for r in connection.execute(text("SELECT * FROM audit_log")))
    engine.dispose()
    assert secret not in dump and secret not in audit


def test_an_api_revoke_takes_effect_on_this_gateway_at_once(stack: SecurityStack) -> None:
    with stack.api("admin") as admin:
        key = admin.post("/api/admin/keys", json={"team": "gamma"}).json()["key"]
        assert _chat(stack, key) == 200  # now cached as valid for the cache TTL (30 s)
        revoked = admin.post(f"/api/admin/keys/{key[3:13]}/revoke")
        assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
        assert _chat(stack, key) == 401
        again = admin.post(f"/api/admin/keys/{key[3:13]}/revoke")
    assert again.status_code == 404


def test_rotation_with_and_without_grace(stack: SecurityStack) -> None:
    with stack.api("admin") as admin:
        old = admin.post("/api/admin/keys", json={"team": "gamma", "admin": False}).json()["key"]
        assert _chat(stack, old) == 200
        graceful = admin.post(f"/api/admin/keys/{old[3:13]}/rotate", json={"grace_s": 3600})
        assert graceful.status_code == 200
        new = graceful.json()["key"]
        assert graceful.json()["team"] == "gamma"
        assert _chat(stack, old) == 200 and _chat(stack, new) == 200
        listed = {k["prefix"]: k["state"] for k in admin.get("/api/admin/keys").json()["data"]}
        assert listed[old[3:13]] == "revoking" and listed[new[3:13]] == "active"
        at_once = admin.post(f"/api/admin/keys/{new[3:13]}/rotate")
        newest = at_once.json()["key"]
        assert _chat(stack, new) == 401 and _chat(stack, newest) == 200
        bad = admin.post(f"/api/admin/keys/{newest[3:13]}/rotate", json={"grace_s": -1})
        assert bad.status_code == 400
        audit = admin.get("/api/admin/audit", params={"action": "key.rotate"}).json()["data"]
    assert len(audit) == 2
    admin_prefix = stack.keys["admin"][3:13]
    assert all(e["actor"] == f"key {admin_prefix} (platform)" for e in audit)


def test_a_cli_revoke_reaches_the_gateway_within_the_cache_ttl(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from tests.security.stack import security_stack

    config = {"limits": {"key_cache_ttl_s": 2}}
    with security_stack("sqlite", tmp_path_factory.mktemp("ttl"), config=config) as small:
        key = small.keys["beta"]
        assert _chat(small, key) == 200
        env = {
            **os.environ,
            "PLUMBLINE_DATABASE__URL": small.database_url,
            "PLUMBLINE_KEY_SALT": TEST_PEPPER,
        }
        revoked = subprocess.run(
            plumbline_command("keys", "revoke", key[3:13]),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert revoked.returncode == 0, revoked.stderr
        wait_until(
            lambda: _chat(small, key) != 200,
            timeout=2 + 10,
            what="the revoked key refused once the key cache's TTL passed",
            poll=0.2,
        )
        assert _chat(small, key) == 401
