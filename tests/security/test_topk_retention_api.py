"""The admin API sets a team's top-k retention; bad values and non-admin callers are refused."""

from __future__ import annotations

import pytest

from tests.security.stack import SecurityStack

pytestmark = pytest.mark.xdist_group("security-topk-retention")


def test_admin_sets_topk_retention_and_bad_values_get_openai_errors(stack: SecurityStack) -> None:
    with stack.api("admin") as admin:
        changed = admin.patch("/api/admin/teams/beta", json={"topk_retention_days": 7})
        assert changed.status_code == 200 and changed.json()["topk_retention_days"] == 7
        for bad in (-1, 731, "seven", 10**12, [7]):
            refused = admin.patch("/api/admin/teams/beta", json={"topk_retention_days": bad})
            assert 400 <= refused.status_code < 500, (bad, refused.text)
            assert set(refused.json()["error"]) == {"message", "type", "param", "code"}
        listed = {t["name"]: t for t in admin.get("/api/admin/teams").json()["data"]}
        assert listed["beta"]["topk_retention_days"] == 7
        cleared = admin.patch("/api/admin/teams/beta", json={"topk_retention_days": None})
        assert cleared.status_code == 200 and cleared.json()["topk_retention_days"] is None


def test_a_team_key_cannot_change_topk_retention(stack: SecurityStack) -> None:
    with stack.api("beta") as team:
        refused = team.patch("/api/admin/teams/alpha", json={"topk_retention_days": 1})
    assert refused.status_code in (401, 403)
    with stack.api("admin") as admin:
        alpha = {t["name"]: t for t in admin.get("/api/admin/teams").json()["data"]}["alpha"]
    assert alpha["topk_retention_days"] is None
