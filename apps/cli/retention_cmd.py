"""`plumbline retention apply`: drop or delete every call row past its team's retention."""

from __future__ import annotations

import typer

from apps.cli.admin_context import admin_transaction, cli_actor

retention_app = typer.Typer(no_args_is_help=True, help="Retention of calls, logprobs, bodies.")


@retention_app.command("apply")
def apply() -> None:
    """Run the retention job once (workers run it on a schedule)."""
    from datetime import UTC, datetime

    from gateway.retention.service import apply_retention

    with admin_transaction() as (_, session):
        report = apply_retention(session, datetime.now(UTC), actor=cli_actor())
    rows = ", ".join(f"{t}={n}" for t, n in sorted(report.deleted_rows.items()) if n) or "none"
    typer.echo(f"dropped {len(report.dropped_partitions)} partitions; deleted rows: {rows}")
    for name in report.skipped_partitions:
        typer.echo(f"busy, left for the next pass: {name}", err=True)


def register(app: typer.Typer) -> None:
    """Add the retention command group to the CLI."""
    app.add_typer(retention_app, name="retention")
