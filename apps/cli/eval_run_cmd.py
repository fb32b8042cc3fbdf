"""`plumbline eval run`: create (or resume) a run, show progress, print the report."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from apps.cli.eval_context import database, eval_key, fail, gateway_client, run_service

if TYPE_CHECKING:
    from rich.console import Console
    from sqlalchemy.orm import Session, sessionmaker

    from evals.runs.runner import RunOutcome
    from evals.scoring import RunScore
    from plumbline.settings import Settings

EXIT_BELOW_THRESHOLD = 3


def run_command(
    suite: Annotated[str | None, typer.Argument(help="Suite name or id")] = None,
    resume: Annotated[int | None, typer.Option(help="Resume this run instead")] = None,
    team: Annotated[str | None, typer.Option(help="Team of the suite, if ambiguous")] = None,
    gateway: Annotated[str | None, typer.Option(help="Gateway base URL")] = None,
    check: Annotated[
        bool, typer.Option(help=f"Exit {EXIT_BELOW_THRESHOLD} if agreement is below threshold")
    ] = False,
) -> None:
    """Run a suite: every sample a gateway call tagged eval:<suite>; then score and report."""
    from evals.runs.creation import create_run
    from evals.suites.lookup import find_suite

    if (suite is None) == (resume is None):
        fail("name a SUITE to start a run, or pass --resume RUN_ID (not both)")
    with database() as (settings, sessions):
        eval_key(settings)  # before creating a run that could not be sent
        if resume is not None:
            run_id = resume
        else:
            assert suite is not None

            def start(session: Session) -> int:
                found = find_suite(session, suite, team_id=None, team=team)
                created = create_run(session, found.id, team_id=None, trigger="cli")
                for key, count in sorted(created.short_of_paraphrases.items()):
                    typer.echo(
                        f"note: question {key} has {count} approved paraphrases; it runs with "
                        f"{count + 1} wordings (the canonical one included)",
                        err=True,
                    )
                return created.run_id

            run_id = run_service(sessions, start)
        typer.echo(f"run {run_id}", err=True)
        outcome = _execute(settings, sessions, run_id, gateway, resume is not None)
    if outcome.score is None:
        fail(f"run {run_id} {outcome.status}: no sample could be scored ({outcome.samples})")
    print_run(outcome.score)
    if outcome.status != "completed":
        fail(
            f"run {run_id} is {outcome.status}; resume with `plumbline eval run --resume {run_id}`"
        )
    if check and outcome.score.agreement.upper < outcome.score.info.threshold:
        raise typer.Exit(EXIT_BELOW_THRESHOLD)


def _execute(
    settings: Settings,
    sessions: sessionmaker[Session],
    run_id: int,
    gateway: str | None,
    resume: bool,
) -> RunOutcome:
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from evals.errors import EvalServiceError
    from evals.run_trace import run_tracing_from_env
    from evals.runs.execution import ExecutionPolicy
    from evals.runs.limits import ConcurrencyLimits
    from evals.runs.repository import samples as sample_repo
    from evals.runs.runner import RunnerOptions, execute_run

    with sessions() as session:
        counts = sample_repo.status_counts(session, run_id)
    total = sum(counts.values())
    finished = counts.get("done", 0) + counts.get("rejected", 0)
    options = RunnerOptions(
        limits=ConcurrencyLimits(settings.eval.concurrency, settings.eval.backend_concurrency),
        policy=ExecutionPolicy(max_attempts=settings.eval.max_attempts),
        logprob_wait_s=settings.eval.logprob_wait_s,
        notify=settings.worker.notify,
        finalize_lease_s=settings.worker.finalize_lease_s,
        tracing=run_tracing_from_env(os.environ, "plumbline-cli"),
    )
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task("samples", total=total, completed=finished)

        async def work() -> RunOutcome:
            async with gateway_client(settings, gateway) as client:
                return await execute_run(
                    sessions,
                    client,
                    run_id,
                    options,
                    resume=resume,
                    on_sample=lambda outcome: (
                        progress.advance(task) if outcome.status != "skipped" else None
                    ),
                )

        try:
            return asyncio.run(work())
        except EvalServiceError as error:
            fail(error.message)
        except KeyboardInterrupt:
            fail(f"interrupted; resume with `plumbline eval run --resume {run_id}`", 130)


def print_run(score: RunScore, console: Console | None = None) -> None:
    """The terminal report plus what the backend's logprobs and context limits say."""
    from rich.console import Console

    from evals.report import print_report

    console = console or Console()
    print_report(score, console)
    info = score.info
    mode = info.logprobs_mode or "none (self-consistency only: no divergent tokens)"
    console.print(f"logprobs: {mode}", markup=False, highlight=False)
    flagged = score.context_flagged
    if flagged:
        console.print(
            f"context: {', '.join(flagged)} hit a length limit (prompt near max_model_len, "
            "answer cut at max_tokens, or context refused)",
            markup=False,
            highlight=False,
        )
    if info.greedy:
        labels = score.questions["repeatability"].astype(str).value_counts().to_dict()
        console.print(f"temperature 0 repeatability: {labels}", markup=False, highlight=False)
