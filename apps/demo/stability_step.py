"""The demo's stability part: schedule the suite, follow the worker's run, show what it found."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from sqlalchemy.orm import Session, sessionmaker

from apps.demo.suite import DEMO_SUITE
from apps.demo.webhook_inbox import WebhookInbox
from evals.report import print_report
from evals.runs.repository import runs as run_repo
from evals.runs.repository import samples as sample_repo
from evals.runs.stored_score import load_run_score
from evals.suites.importer import import_suite, parse_suite
from evals.transaction import in_transaction

FINISHED = ("completed", "partial", "failed")


def schedule_suite(sessions: sessionmaker[Session]) -> int:
    """Import the demo suite; its cron schedule hands it to the worker's beat."""
    suite = parse_suite(DEMO_SUITE)
    return in_transaction(sessions, import_suite, suite, source_yaml=DEMO_SUITE).suite_id


def _latest_run(session: Session, suite_id: int) -> tuple[int, str, dict[str, int]] | None:
    runs = run_repo.list_runs(session, None, suite_id, 1)
    if not runs:
        return None
    run = runs[0][0]
    return run.id, run.status, sample_repo.status_counts(session, run.id)


def follow_first_run(sessions: sessionmaker[Session], suite_id: int, timeout: float) -> int:
    """Show the worker's progress on the suite's first run; its id once it is scored."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    deadline = time.monotonic() + timeout
    with Progress(*columns, transient=True) as progress:
        task = progress.add_task("waiting for the schedule to start a run", total=None)
        while time.monotonic() < deadline:
            with sessions() as session:
                found = _latest_run(session, suite_id)
            if found is not None:
                run_id, status, counts = found
                done = counts.get("done", 0) + counts.get("rejected", 0)
                progress.update(
                    task,
                    description=f"run {run_id} on the worker ({status})",
                    total=sum(counts.values()),
                    completed=done,
                )
                if status in FINISHED:
                    return run_id
            time.sleep(0.5)
    raise TimeoutError(f"the worker did not finish a run of the demo suite in {timeout:g} s")


def show_report(sessions: sessionmaker[Session], run_id: int, console: Console) -> None:
    """The scored run in the terminal: agreement, worst questions, first divergent tokens."""
    with sessions() as session:
        score = load_run_score(session, run_id, team_id=None)
    print_report(score, console)


def wait_for_alert(inbox: WebhookInbox, timeout: float) -> dict[str, Any]:
    """The first alert the webhook channel received."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        messages = inbox.messages()
        if messages:
            return messages[0]
        time.sleep(0.2)
    raise TimeoutError(f"no alert reached the webhook in {timeout:g} s")


def show_alert(message: dict[str, Any], url: str, console: Console) -> None:
    """The webhook's view of the alert: what fired, the figures, the worst question and why."""
    lines = [
        f"[bold]{str(message.get('event', '?')).upper()}[/bold]  {message.get('summary', '')}",
        f"suite {message.get('suite')} / team {message.get('team')} / rule {message.get('rule')}",
    ]
    for worst in message.get("worst") or []:
        lines.append(
            f"  {worst['question']}: agreement {worst['agreement']:.0%} "
            f"[{worst['lower']:.0%}, {worst['upper']:.0%}], modal answer {worst['modal_answer']!r}"
        )
        if worst.get("explanation"):
            lines.append(f"    {worst['explanation']}")
    if message.get("link"):
        lines.append(f"link: {message['link']}")
    console.print(Panel("\n".join(lines), title=f"POST {url}", expand=False))
