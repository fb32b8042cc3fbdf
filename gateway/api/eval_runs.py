"""Routes: start or resume a run (executed in the background), list runs, one run, its report."""

from __future__ import annotations

import logging
from typing import Annotated, Literal

from fastapi import APIRouter, BackgroundTasks, Query, Request, Response, status
from sqlalchemy.orm import Session, sessionmaker

from evals.gateway_client import GatewayClient
from evals.report import render_html
from evals.report.csv_cells import spreadsheet_csv
from evals.runs.creation import create_run
from evals.runs.execution import ExecutionPolicy
from evals.runs.listing import run_detail, run_view, run_views
from evals.runs.runner import RunnerOptions, execute_run
from evals.runs.stored_score import load_run_score
from evals.runs.views import RunDetail, RunView
from evals.transaction import in_thread_transaction
from gateway.api.deps import CallerDep, SessionDep, StateDep, team_scope
from gateway.api.eval_calls import eval_client, run_tracing, shared_limits
from gateway.api.eval_errors import gateway_errors
from gateway.api.eval_schemas import IdPath, IdQuery, RunList

router = APIRouter(prefix="/api/evals", tags=["evals"])
log = logging.getLogger(__name__)


async def _execute(
    sessions: sessionmaker[Session],
    client: GatewayClient,
    run_id: int,
    options: RunnerOptions,
    resume: bool,
) -> None:
    """The background task: run to the end; failures are stored on the run, not raised."""
    async with client:
        try:
            await execute_run(sessions, client, run_id, options, resume=resume)
        except Exception:
            log.exception("eval run %s failed", run_id)


def _options(state: StateDep, request: Request) -> RunnerOptions:
    settings = state.settings.eval
    return RunnerOptions(
        limits=shared_limits(request),
        policy=ExecutionPolicy(max_attempts=settings.max_attempts),
        logprob_wait_s=settings.logprob_wait_s,
        notify=state.settings.worker.notify,
        finalize_lease_s=state.settings.worker.finalize_lease_s,
        tracing=run_tracing(request),
    )


@router.post(
    "/suites/{suite_id}/runs", response_model=RunView, status_code=status.HTTP_202_ACCEPTED
)
async def start_run(
    suite_id: IdPath,
    request: Request,
    background: BackgroundTasks,
    caller: CallerDep,
    state: StateDep,
) -> RunView:
    """Create a run (all samples pending, committed) and execute it in the background."""
    # Built first: without eval.gateway_url no run is created that could never execute.
    client = eval_client(request)
    with gateway_errors():
        created = await in_thread_transaction(
            state.sessions, create_run, suite_id, team_id=team_scope(caller), trigger="api"
        )
        view = await in_thread_transaction(state.sessions, run_view, created.run_id, team_id=None)
    options = _options(state, request)
    background.add_task(_execute, state.sessions, client, created.run_id, options, False)
    return view


@router.post("/runs/{run_id}/resume", response_model=RunView, status_code=status.HTTP_202_ACCEPTED)
async def resume_run(
    run_id: IdPath,
    request: Request,
    background: BackgroundTasks,
    caller: CallerDep,
    state: StateDep,
) -> RunView:
    """Execute a run's unanswered samples again (after a crash or failures), then rescore it."""
    client = eval_client(request)
    with gateway_errors():
        view = await in_thread_transaction(
            state.sessions, run_view, run_id, team_id=team_scope(caller)
        )
    options = _options(state, request)
    background.add_task(_execute, state.sessions, client, run_id, options, True)
    return view


@router.get("/runs", response_model=RunList)
def list_runs(
    caller: CallerDep,
    session: SessionDep,
    suite_id: IdQuery = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> RunList:
    """Runs of the caller's team, newest first."""
    views = run_views(session, team_id=team_scope(caller), suite_id=suite_id, limit=limit)
    return RunList(data=views)


@router.get("/runs/{run_id}", response_model=RunDetail)
def get_run(run_id: IdPath, caller: CallerDep, session: SessionDep) -> RunDetail:
    """One run with per-question results and first-divergent-token reports."""
    with gateway_errors():
        return run_detail(session, run_id, team_id=team_scope(caller))


@router.get("/runs/{run_id}/report")
def run_report(
    run_id: IdPath,
    caller: CallerDep,
    session: SessionDep,
    format: Literal["html", "csv"] = "html",
) -> Response:
    """The run's report as a self-contained HTML page, or its question table as CSV."""
    with gateway_errors():
        score = load_run_score(session, run_id, team_id=team_scope(caller))
    if format == "csv":
        body = spreadsheet_csv(score.questions)
        disposition = f'attachment; filename="run-{run_id}-questions.csv"'
        return Response(body, media_type="text/csv", headers={"Content-Disposition": disposition})
    return Response(render_html(score), media_type="text/html")
