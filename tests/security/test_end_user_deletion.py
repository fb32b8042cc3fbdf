"""A delete-by-user request: calls, bodies, logprobs, live and eval rows go; proof stays."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select, text, update

from plumbline.child_process import plumbline_command
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import AuditEntry, Call, CallBody, CallLogprobs, EvalSample, LiveSample
from tests.security.evals import STABLE, import_and_run, suite_yaml
from tests.security.stack import SecurityStack, security_stack
from tests.support.calls import CallReader
from tests.support.gateway_process import TEST_PEPPER
from tests.support.waiting import wait_until

pytestmark = pytest.mark.xdist_group("security-deletion")
QUESTION = [{"role": "user", "content": "What is the governing law of the agreement?"}]


@pytest.fixture(scope="module", params=["postgres", "sqlite"])
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SecurityStack]:
    config = {"live_sampling": {"features": {"chat": {"rate": 1.0}}}}
    workdir = tmp_path_factory.mktemp("deletion")
    with security_stack(request.param, workdir, config=config) as running:
        yield running


def _calls(stack: SecurityStack, who: str, user: str, count: int) -> list[str]:
    ids = []
    with stack.openai(who) as client:
        for i in range(count):
            raw = client.chat.completions.with_raw_response.create(
                model="tiny",
                messages=QUESTION,  # type: ignore[arg-type]
                max_tokens=16,
                logprobs=True,
                top_logprobs=2,
                stream=i % 2 == 1,
                extra_headers={"X-Plumbline-User": user, "X-Plumbline-Feature": "chat"},
            )
            parsed = raw.parse()
            if i % 2 == 1:
                list(parsed)  # type: ignore[call-overload]
            ids.append(str(raw.headers["x-plumbline-call-id"]))
    reader = CallReader(stack.database_url)
    for call_id in ids:
        reader.wait(call_id)
    reader.close()
    return ids


def _wait_live_samples(stack: SecurityStack, call_ids: list[str]) -> None:
    engine = create_db_engine(stack.database_url)
    query = select(func.count()).where(LiveSample.call_id.in_(call_ids))
    with make_session_factory(engine)() as session:
        try:
            wait_until(
                lambda: session.scalar(query) == len(call_ids),
                timeout=15,
                what="a live sample of every call",
                poll=0.1,
            )
        finally:
            engine.dispose()


def test_deleting_an_end_user_removes_their_data_only(stack: SecurityStack) -> None:
    gone = _calls(stack, "alpha", "user-17", 3)
    kept = _calls(stack, "alpha", "user-18", 2)
    other_team = _calls(stack, "beta", "user-17", 2)
    _wait_live_samples(stack, gone + kept)
    with stack.api("alpha") as alpha:
        _, run_id = import_and_run(alpha, suite_yaml("law", "alpha", *STABLE))
    engine = create_db_engine(stack.database_url)
    sessions = make_session_factory(engine)
    with sessions.begin() as session:
        # An eval sample asked on behalf of this end user: its call carries the user's id.
        sample = session.scalars(select(EvalSample).where(EvalSample.run_id == run_id)).first()
        assert sample is not None and sample.text
        session.execute(update(Call).where(Call.id == sample.call_id).values(end_user="user-17"))
        eval_call, sample_id = sample.call_id, sample.id

    with stack.api("admin") as admin:
        done = admin.post(
            "/api/admin/end-users/delete", json={"team": "alpha", "end_user": "user-17"}
        )
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["deleted_rows"]["calls"] == 4 and body["deleted_rows"]["call_bodies"] == 4
    assert body["deleted_rows"]["call_logprobs"] == 4
    assert body["deleted_rows"]["live_samples"] == 3
    assert body["eval_samples_cleared"] == 1
    with stack.api("alpha") as alpha:
        assert all(alpha.get(f"/api/calls/{c}").status_code == 404 for c in [*gone, eval_call])
        assert all(alpha.get(f"/api/calls/{c}").status_code == 200 for c in kept)
    with stack.api("beta") as beta:
        assert all(beta.get(f"/api/calls/{c}").status_code == 200 for c in other_team)
    with sessions() as session:
        for model, column in ((CallLogprobs, "call_id"), (CallBody, "call_id")):
            left = session.scalar(
                select(func.count()).where(getattr(model, column).in_([*gone, eval_call]))
            )
            assert left == 0
        assert session.scalar(select(func.count()).where(LiveSample.call_id.in_(kept))) == 2
        cleared = session.get(EvalSample, sample_id)
        assert cleared is not None and cleared.text is None and cleared.call_id is None
        entry = session.get(AuditEntry, body["audit_id"])
        assert entry is not None and entry.action == "end_user.delete"
        assert entry.target == body["end_user_digest"] and entry.details["deleted_rows"]
        audit_text = str(session.execute(text("SELECT * FROM audit_log")).all())
    assert "user-17" not in audit_text  # only a keyed hash of the id is kept

    env = {
        **os.environ,
        "PLUMBLINE_DATABASE__URL": stack.database_url,
        "PLUMBLINE_KEY_SALT": TEST_PEPPER,
    }
    printed = subprocess.run(
        plumbline_command("end-users", "delete", "user-18", "--team", "alpha"),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert printed.returncode == 0, printed.stderr
    assert "calls=2" in printed.stdout and "live_samples=2" in printed.stdout
    with sessions() as session:
        assert session.scalar(select(func.count()).where(Call.id.in_(kept))) == 0
        assert session.scalar(select(func.count()).where(Call.id.in_(other_team))) == 2
    engine.dispose()


def test_unknown_teams_and_bad_ids_are_4xx(stack: SecurityStack) -> None:
    with stack.api("admin") as admin:
        missing = admin.post("/api/admin/end-users/delete", json={"team": "nope", "end_user": "x"})
        empty = admin.post("/api/admin/end-users/delete", json={"team": "alpha", "end_user": ""})
        extra = admin.post(
            "/api/admin/end-users/delete", json={"team": "alpha", "end_user": "x", "all": True}
        )
    assert missing.status_code == 404 and empty.status_code == 400 and extra.status_code == 400
