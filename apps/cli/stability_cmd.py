"""`plumbline stability`: near-tie report per feature, and the agreement of live traffic."""

from __future__ import annotations

from typing import Annotated

import typer

from apps.cli.eval_context import database

stability_app = typer.Typer(no_args_is_help=True, help="Answer stability of production traffic.")


@stability_app.command("near-ties")
def near_ties(
    hours: Annotated[float, typer.Option(min=0.01, help="Look back this many hours")] = 24.0,
    min_calls: Annotated[int, typer.Option(min=1, help="Skip features with fewer calls")] = 1,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 20,
) -> None:
    """Features whose answers most often pass through a near-tie token (from logprobs)."""
    from datetime import UTC, datetime, timedelta

    from gateway.stability.near_tie_queries import near_tie_features

    until = datetime.now(UTC)
    with database() as (_, sessions), sessions() as session:
        rows = near_tie_features(
            session, None, until - timedelta(hours=hours), until, min_calls=min_calls, limit=limit
        )
    typer.echo(f"{'feature':<32} {'calls':>7} {'near-tie':>9} {'share':>7} {'min margin':>11}")
    for row in rows:
        margin = f"{row.min_margin:.3f}" if row.min_margin is not None else "-"
        typer.echo(
            f"{row.feature or '(none)':<32} {row.calls:>7} {row.near_tie_calls:>9} "
            f"{row.near_tie_share:>7.1%} {margin:>11}"
        )
    if not rows:
        typer.echo("no calls with logprobs in the window", err=True)


@stability_app.command("live")
def live(
    hours: Annotated[float, typer.Option(min=0.01, help="Look back this many hours")] = 24.0,
) -> None:
    """Agreement of resampled production calls with their original answers, per feature."""
    from datetime import UTC, datetime, timedelta

    from evals.live_sampling.repository import agreement_by_feature

    since = datetime.now(UTC) - timedelta(hours=hours)
    with database() as (_, sessions), sessions() as session:
        rows = agreement_by_feature(session, since)
    typer.echo(f"{'feature':<32} {'samples':>8} {'resamples':>10} {'agreement':>10}")
    for feature, samples, agreement, answered in rows:
        typer.echo(f"{feature:<32} {samples:>8} {answered:>10} {agreement:>10.1%}")
    if not rows:
        typer.echo("no live samples in the window", err=True)


def register(app: typer.Typer) -> None:
    """Add the stability command group to the CLI."""
    app.add_typer(stability_app, name="stability")
