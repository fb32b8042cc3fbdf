"""`plumbline alerts`: list alerts and acknowledge a firing one."""

from __future__ import annotations

import getpass
from typing import TYPE_CHECKING, Annotated

import typer

from apps.cli.eval_context import database, run_service

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from evals.alerts.views import AlertView

alerts_app = typer.Typer(no_args_is_help=True, help="Eval alerts: list, show, acknowledge.")


def _line(view: AlertView) -> str:
    ack = f" ack by {view.acknowledged_by}" if view.acknowledged_by else ""
    return (
        f"{view.id:>5}  {view.status:<12} {view.team}/{view.suite}  {view.rule:<24} "
        f"since {view.started_at:%Y-%m-%d %H:%M}{ack}  {view.summary}"
    )


@alerts_app.command("list")
def list_(
    status: Annotated[
        str, typer.Option(help="open, firing, acknowledged, resolved or all")
    ] = "open",
    suite: Annotated[str | None, typer.Option(help="Suite name or id")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 100,
) -> None:
    """Alerts, newest first (open ones by default)."""
    from evals.alerts.listing import list_alerts
    from evals.suites.lookup import find_suite

    def work(session: Session) -> list[AlertView]:
        suite_id = find_suite(session, suite, team_id=None).id if suite else None
        return list_alerts(session, team_id=None, status=status, suite_id=suite_id, limit=limit)

    with database() as (_, sessions):
        views = run_service(sessions, work)
    for view in views:
        typer.echo(_line(view))
    if not views:
        typer.echo(f"no {status} alerts", err=True)


@alerts_app.command("show")
def show(alert_id: Annotated[int, typer.Argument(min=1)]) -> None:
    """One alert with its history and notification deliveries."""
    from evals.alerts.listing import alert_detail

    with database() as (_, sessions):
        view = run_service(sessions, lambda s: alert_detail(s, alert_id, team_id=None))
    typer.echo(_line(view))
    for event in view.events:
        typer.echo(
            f"  {event['at']}  {event['kind']:<13} run {event['run_id']} {event['actor'] or ''}"
        )
    for sent in view.notifications:
        typer.echo(
            f"  notify {sent['channel']} ({sent['kind']}): {sent['status']} after "
            f"{sent['attempts']} attempts, last status {sent['last_status_code']}"
        )


@alerts_app.command("ack")
def ack(
    alert_id: Annotated[int, typer.Argument(min=1, help="Alert id (see `plumbline alerts list`)")],
    by: Annotated[str | None, typer.Option(help="Who acknowledges (default: your user)")] = None,
) -> None:
    """Acknowledge a firing alert: it stays open but is not sent again until it resolves."""
    from datetime import UTC, datetime

    from evals.alerts.listing import acknowledge_alert

    who = by or getpass.getuser()
    with database() as (_, sessions):
        view = run_service(
            sessions,
            lambda s: acknowledge_alert(s, alert_id, who, team_id=None, now=datetime.now(UTC)),
        )
    typer.echo(_line(view))


def register(app: typer.Typer) -> None:
    """Add the alerts command group to the CLI."""
    app.add_typer(alerts_app, name="alerts")
