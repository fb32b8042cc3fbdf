"""JSON the page needs beyond the read API: the caller, traffic over time, a question's samples."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Path, Query

from evals.runs.repository import runs as run_repo
from gateway.api import usage_budgets
from gateway.api.deps import ReadCallerDep, SessionDep, StateDep, team_scope
from gateway.api.eval_schemas import IdPath
from gateway.api.schemas import BudgetReport
from gateway.dashboard import sample_queries, traffic_queries
from gateway.dashboard.schemas import (
    CallerOut,
    QuestionSamples,
    SampleOut,
    TrafficPoint,
    TrafficReport,
)
from gateway.errors import GatewayError

router = APIRouter(prefix="/api/dashboard", tags=["dashboard"])
MAX_BUCKETS = 1440
# Steps the page's charts read well at; the default is the smallest giving < 360 buckets.
AUTO_STEPS = (10, 30, 60, 300, 900, 3600, 21600, 86400)
SOURCES = ("product", "eval", "live_sample")


@router.get("/me", response_model=CallerOut)
def me(caller: ReadCallerDep) -> CallerOut:
    """The team of the presented key, and whether it is an admin key."""
    return CallerOut(
        key_id=caller.key_id, team_id=caller.team_id, team=caller.team_name, admin=caller.is_admin
    )


@router.get("/budgets", response_model=BudgetReport)
async def budgets(
    caller: ReadCallerDep,
    state: StateDep,
    team: Annotated[str | None, Query(max_length=128, description="admin keys only")] = None,
) -> BudgetReport:
    """Spend against budget for the page, as GET /api/usage/budgets answers it."""
    return await usage_budgets.budgets(caller, state, team)


def _aligned(since: datetime, until: datetime, step_s: int) -> tuple[int, int]:
    start = math.floor(since.timestamp() / step_s) * step_s
    end = math.ceil(until.timestamp() / step_s) * step_s
    return start, max(end, start + step_s)


@router.get("/traffic", response_model=TrafficReport)
def traffic(
    caller: ReadCallerDep,
    session: SessionDep,
    since: datetime | None = None,
    until: datetime | None = None,
    step_s: Annotated[int | None, Query(ge=10, le=86400)] = None,
    feature: Annotated[str | None, Query(max_length=128)] = None,
    source: Annotated[str | None, Query(description=", ".join(SOURCES))] = None,
) -> TrafficReport:
    """Calls, errors and TTFT / end-to-end p50 and p95 per time bucket (default: last hour)."""
    if source is not None and source not in SOURCES:
        raise GatewayError(400, f"`source` must be one of {', '.join(SOURCES)}.", "source")
    until = until or datetime.now(UTC)
    since = since or until - timedelta(hours=1)
    if since.tzinfo is None or until.tzinfo is None:
        raise GatewayError(400, "`since` and `until` need a timezone, e.g. 2026-11-29T00:00:00Z.")
    if since >= until:
        raise GatewayError(400, "`since` must be before `until`.", "since")
    span = (until - since).total_seconds()
    step = step_s or next((s for s in AUTO_STEPS if span / s < 360), AUTO_STEPS[-1])
    start, end = _aligned(since, until, step)
    if (end - start) // step > MAX_BUCKETS:
        raise GatewayError(
            400, f"At most {MAX_BUCKETS} buckets: widen `step_s` or narrow the window.", "step_s"
        )
    window = traffic_queries.TrafficWindow(
        team_scope(caller),
        datetime.fromtimestamp(start, UTC),
        datetime.fromtimestamp(end, UTC),
        step,
        feature,
        source,
    )
    found = traffic_queries.traffic_buckets(session, window)
    data = [
        TrafficPoint(t=datetime.fromtimestamp(t, UTC), **found.get(t, {"calls": 0, "errors": 0}))
        for t in range(start, end, step)
    ]
    return TrafficReport(
        since=window.since,
        until=window.until,
        step_s=step,
        feature=feature,
        source=source,
        data=data,
    )


QuestionKey = Annotated[str, Path(min_length=1, max_length=128)]


@router.get("/runs/{run_id}/questions/{question_key}/samples", response_model=QuestionSamples)
def question_samples(
    run_id: IdPath, question_key: QuestionKey, caller: ReadCallerDep, session: SessionDep
) -> QuestionSamples:
    """Every sample of one question of a run, with the wordings it was asked in."""
    run = run_repo.run_by_id(session, run_id, team_scope(caller))
    if run is None:
        raise GatewayError(404, f"No run {run_id} is visible to this key.", "run_id")
    question_id = run.definition.get("question_ids", {}).get(question_key)
    if question_id is None:
        raise GatewayError(404, f"Run {run_id} has no question `{question_key}`.", "question_key")
    wordings = run.definition.get("wordings", {}).get(question_key, [])
    rows = sample_queries.samples_of_question(session, run_id, int(question_id))
    return QuestionSamples(
        run_id=run_id,
        question_key=question_key,
        wordings=[str(w.get("text", "")) for w in wordings],
        samples=[SampleOut.model_validate(r) for r in rows],
    )
