"""`plumbline teams`: list teams, set their rate limits, budgets, bodies, retention, models."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from apps.cli.admin_context import admin_transaction, cli_actor
from apps.cli.model_options import AllModelsOption, ModelsOption, model_values, shown

teams_app = typer.Typer(
    no_args_is_help=True, help="Team policies: limits, bodies, retention, models."
)


@teams_app.command("list")
def list_teams() -> None:
    """Every team with its policies."""
    from plumbline.repositories import teams as team_repo

    with admin_transaction() as (_, session):
        for team in team_repo.list_teams(session):
            bodies = "on" if team.store_bodies else "off"
            typer.echo(
                f"{team.name:20}  rpm={team.requests_per_minute or '-'}  "
                f"tpm={team.tokens_per_minute or '-'}  bodies={bodies}  "
                f"retention={team.retention_days or 'keep'}  "
                f"budget day={team.budget_day or '-'} month={team.budget_month or '-'} "
                f"soft={team.budget_soft_fraction or 0.8}  models={shown(team.allowed_models)}  "
                f"topk={team.topk_retention_days or 'with calls'}"
            )


@teams_app.command("set")
def set_policy(
    name: Annotated[str, typer.Argument(help="The team")],
    rpm: Annotated[int | None, typer.Option("--rpm", help="Requests per minute, all keys")] = None,
    tpm: Annotated[int | None, typer.Option("--tpm", help="Tokens per minute, all keys")] = None,
    no_limits: Annotated[bool, typer.Option("--no-limits", help="Clear both limits")] = False,
    store_bodies: Annotated[
        bool | None, typer.Option("--store-bodies/--no-store-bodies", help="Keep bodies")
    ] = None,
    retention_days: Annotated[
        int | None, typer.Option(help="Days calls are kept: 1, 7, 14, 30, 60, 90, 180, 365, 730, 0")
    ] = None,
    budget_day: Annotated[
        float | None, typer.Option("--budget-day", help="Spend per UTC day, price currency")
    ] = None,
    budget_month: Annotated[
        float | None, typer.Option("--budget-month", help="Spend per UTC month, price currency")
    ] = None,
    budget_soft: Annotated[
        float | None, typer.Option("--budget-soft", help="Fraction of a budget that notifies")
    ] = None,
    no_budgets: Annotated[bool, typer.Option("--no-budgets", help="Remove both budgets")] = False,
    models: ModelsOption = None,
    all_models: AllModelsOption = False,
    topk_retention_days: Annotated[
        int | None,
        typer.Option(help="Days top-k logprob alternatives are kept (0: as long as the calls)"),
    ] = None,
    create: Annotated[bool, typer.Option(help="Create the team if it does not exist")] = False,
) -> None:
    """Change the given policies of a team (the others keep their values); audited."""
    from gateway.auth.teams import set_team_policy

    values: dict[str, Any] = {}
    if no_limits:
        values.update(requests_per_minute=None, tokens_per_minute=None)
    if rpm is not None:
        values["requests_per_minute"] = rpm
    if tpm is not None:
        values["tokens_per_minute"] = tpm
    if store_bodies is not None:
        values["store_bodies"] = store_bodies
    if retention_days is not None:
        values["retention_days"] = retention_days
    if no_budgets:
        values.update(budget_day=None, budget_month=None)
    for field, value in (
        ("budget_day", budget_day),
        ("budget_month", budget_month),
        ("budget_soft_fraction", budget_soft),
    ):
        if value is not None:
            values[field] = value
    values.update(model_values(models, all_models))
    if topk_retention_days is not None:
        values["topk_retention_days"] = topk_retention_days
    with admin_transaction() as (_, session):
        team = set_team_policy(session, name, values, create=create, actor=cli_actor())
        summary = ", ".join(f"{k}={getattr(team, k)}" for k in values) or "nothing changed"
    typer.echo(f"team {name}: {summary}")


def register(app: typer.Typer) -> None:
    """Add the teams command group to the CLI."""
    app.add_typer(teams_app, name="teams")
