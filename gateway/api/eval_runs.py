"""Routes: start or resume a run (queued for the workers), list runs, one run, its report.

Only an embedded gateway (the demo: settings.embedded) executes runs itself, as a background
task; every other gateway records the run and queues `evals.start_run` for `plumbline worker`.
"""

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
from evals.runs.queueing import fail_unqueued
from evals.runs.runner import RunnerOptions, execute_run
from evals.runs.stored_score import load_run_score
from evals.runs.views import RunDetail, RunView
from evals.suites.lookup import suite_model
from evals.transaction import in_thread_transaction
from gateway.api.deps import EvalsCallerDep, SessionDep, StateDep, team_scope
from gateway.api.eval_calls import eval_client, run_tracing, shared_limits
from gateway.api.eval_errors import gateway_errors
from gateway.api.eval_queue import BrokerUnavailable, eval_queue
from gateway.api.eval_schemas import IdPath, IdQuery, RunList
from gateway.errors import GatewayError
from gateway.governance.model_refusal import require_model

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


def _broker_down(run_id: int, error: BrokerUnavailable, *, recorded: bool) -> str:
    # The cause names the broker's address: logged for the operator, not told to the caller.
    log.warning("run %s: could not be queued for the workers: %s", run_id, error)
    what = "was recorded but could not be queued" if recorded else "could not be queued again"
    state = "It is marked failed; once" if recorded else "Once"
    return (
        f"Run {run_id} {what} for the eval workers: their broker (the setting "
        f"worker.broker_url, else redis.url) is unreachable. {state} the broker is back, "
        f"resume it: POST /api/evals/runs/{run_id}/resume."
    )


def _execute_here(
    request: Request, state: StateDep, background: BackgroundTasks, run_id: int, resume: bool
) -> None:
    """The embedded mode's in-process execution (the demo's worker broker is out of reach)."""
    client = eval_client(request)
    options = _options(state, request)
    background.add_task(_execute, state.sessions, client, run_id, options, resume)


@router.post(
    "/suites/{suite_id}/runs", response_model=RunView, status_code=status.HTTP_202_ACCEPTED
)
async def start_run(
    suite_id: IdPath,
    request: Request,
    background: BackgroundTasks,
    caller: EvalsCallerDep,
    state: StateDep,
) -> RunView:
    """Create a run (all samples pending, committed) and queue it for the workers."""
    with gateway_errors():
        model = await in_thread_transaction(
            state.sessions, suite_model, suite_id, team_id=team_scope(caller)
        )
    if model is not None:
        # The workers call as the team, so the key's own model list is checked here.
        require_model(model, caller.models, state.config.model_names)
    if state.settings.embedded:
        # Built first: without eval.gateway_url no run is created that could never execute.
        eval_client(request)
    with gateway_errors():
        created = await in_thread_transaction(
            state.sessions, create_run, suite_id, team_id=team_scope(caller), trigger="api"
        )
        view = await in_thread_transaction(state.sessions, run_view, created.run_id, team_id=None)
    if state.settings.embedded:
        _execute_here(request, state, background, created.run_id, False)
        return view
    queue = eval_queue(request)
    try:
        await queue.start(created.run_id, resume=False)
    except BrokerUnavailable as error:
        message = _broker_down(created.run_id, error, recorded=True)
        if await in_thread_transaction(state.sessions, fail_unqueued, created.run_id, message):
            raise GatewayError(503, message, "worker.broker_url") from None
        # The message did reach a worker, which started the run before the error came back.
    return view


@router.post("/runs/{run_id}/resume", response_model=RunView, status_code=status.HTTP_202_ACCEPTED)
async def resume_run(
    run_id: IdPath,
    request: Request,
    background: BackgroundTasks,
    caller: EvalsCallerDep,
    state: StateDep,
) -> RunView:
    """Queue a run's unanswered samples again (after a crash or failures), then its rescoring."""
    with gateway_errors():
        view = await in_thread_transaction(
            state.sessions, run_view, run_id, team_id=team_scope(caller)
        )
    require_model(view.model, caller.models, state.config.model_names)
    if state.settings.embedded:
        _execute_here(request, state, background, run_id, True)
        return view
    queue = eval_queue(request)
    try:
        await queue.start(run_id, resume=True)
    except BrokerUnavailable as error:
        message = _broker_down(run_id, error, recorded=False)
        raise GatewayError(503, message, "worker.broker_url") from None
    return view


@router.get("/runs", response_model=RunList)
def list_runs(
    caller: EvalsCallerDep,
    session: SessionDep,
    suite_id: IdQuery = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> RunList:
    """Runs of the caller's team, newest first."""
    views = run_views(session, team_id=team_scope(caller), suite_id=suite_id, limit=limit)
    return RunList(data=views)


@router.get("/runs/{run_id}", response_model=RunDetail)
def get_run(run_id: IdPath, caller: EvalsCallerDep, session: SessionDep) -> RunDetail:
    """One run with per-question results and first-divergent-token reports."""
    with gateway_errors():
        return run_detail(session, run_id, team_id=team_scope(caller))


@router.get("/runs/{run_id}/report")
def run_report(
    run_id: IdPath,
    caller: EvalsCallerDep,
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
