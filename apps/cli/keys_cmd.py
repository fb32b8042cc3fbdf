"""`plumbline keys`: create, list, rotate and revoke API keys, and set their rate limits."""

from __future__ import annotations

from typing import Annotated

import typer

from apps.cli.admin_context import admin_transaction, cli_actor, fail

keys_app = typer.Typer(no_args_is_help=True, help="Manage API keys (only hashes are stored).")
RpmOption = Annotated[
    int | None, typer.Option("--rpm", help="Requests per minute for this key alone")
]
TpmOption = Annotated[
    int | None, typer.Option("--tpm", help="Tokens per minute for this key alone")
]
BudgetDayOption = Annotated[
    float | None, typer.Option("--budget-day", help="Spend per UTC day for this key alone")
]
BudgetMonthOption = Annotated[
    float | None, typer.Option("--budget-month", help="Spend per UTC month for this key alone")
]


def _budgets(day: float | None, month: float | None) -> dict[str, object]:
    found = {"budget_day": day, "budget_month": month}
    return {name: value for name, value in found.items() if value is not None}


@keys_app.command("create")
def create(
    team: Annotated[str, typer.Option(help="Team the key belongs to (created if new)")],
    admin: Annotated[bool, typer.Option(help="Key may see every team's data")] = False,
    name: Annotated[str, typer.Option(help="A label for the key")] = "default",
    rpm: RpmOption = None,
    tpm: TpmOption = None,
    budget_day: BudgetDayOption = None,
    budget_month: BudgetMonthOption = None,
) -> None:
    """Create a key and print it once."""
    from gateway.auth.service import create_key

    with admin_transaction() as (settings, session):
        issued = create_key(
            session,
            team,
            settings.key_salt.get_secret_value(),
            admin=admin,
            name=name,
            requests_per_minute=rpm,
            tokens_per_minute=tpm,
            budgets=_budgets(budget_day, budget_month),
            actor=cli_actor(),
        )
    typer.echo(issued.plaintext)
    typer.echo(
        f"team={issued.team} admin={issued.is_admin} prefix={issued.prefix} "
        "(store this key now: it cannot be shown again)",
        err=True,
    )


@keys_app.command("list")
def list_keys(
    team: Annotated[str | None, typer.Option(help="Only this team's keys")] = None,
) -> None:
    """List keys by prefix (never the secret)."""
    from datetime import UTC, datetime

    from gateway.api.admin_keys import key_out
    from plumbline.repositories import teams as team_repo

    now = datetime.now(UTC)
    with admin_transaction() as (_, session):
        row = team_repo.team_by_name(session, team) if team else None
        if team and row is None:
            fail(f"no team named {team!r}")
        for key, owner in team_repo.list_keys(session, row.id if row else None):
            out = key_out(key, owner, now)
            role = "admin" if out.admin else "team"
            limits = f"rpm={out.requests_per_minute or '-'} tpm={out.tokens_per_minute or '-'}"
            typer.echo(
                f"{out.prefix}  {out.team:20}  {role:5}  {out.state:8}  {limits}  {out.name}"
            )


@keys_app.command("revoke")
def revoke(
    prefix: Annotated[str, typer.Argument(help="The key's prefix (see `keys list`)")],
) -> None:
    """Revoke a key; gateways stop accepting it within 30 seconds (at once via the admin API)."""
    from gateway.auth.service import revoke_key

    with admin_transaction() as (_, session):
        revoke_key(session, prefix, actor=cli_actor())
    typer.echo(f"revoked {prefix}")


@keys_app.command("rotate")
def rotate(
    prefix: Annotated[str, typer.Argument(help="The key's prefix (see `keys list`)")],
    grace_s: Annotated[
        int, typer.Option("--grace-s", help="Seconds the old key keeps working")
    ] = 0,
) -> None:
    """Issue a new key for the same team (same scope, name, limits) and revoke the old one."""
    from gateway.auth.service import rotate_key

    with admin_transaction() as (settings, session):
        rotation = rotate_key(
            session,
            prefix,
            settings.key_salt.get_secret_value(),
            grace_s=grace_s,
            actor=cli_actor(),
        )
    typer.echo(rotation.issued.plaintext)
    typer.echo(
        f"team={rotation.issued.team} prefix={rotation.issued.prefix} replaces {prefix}, which "
        f"stops working at {rotation.old_revoked_at.isoformat()} (store the new key now)",
        err=True,
    )


@keys_app.command("limits")
def limits(
    prefix: Annotated[str, typer.Argument(help="The key's prefix (see `keys list`)")],
    rpm: RpmOption = None,
    tpm: TpmOption = None,
    budget_day: BudgetDayOption = None,
    budget_month: BudgetMonthOption = None,
    clear: Annotated[bool, typer.Option("--clear", help="Clear both (team limits apply)")] = False,
    no_budgets: Annotated[bool, typer.Option("--no-budgets", help="Remove both budgets")] = False,
) -> None:
    """Set the given limits and budgets of a key (the others stay); the team's apply as well."""
    from gateway.auth.service import set_key_limits

    values: dict[str, object] = {}
    if no_budgets:
        values.update(budget_day=None, budget_month=None)
    values.update(_budgets(budget_day, budget_month))
    if clear:
        values.update(requests_per_minute=None, tokens_per_minute=None)
    if rpm is not None:
        values["requests_per_minute"] = rpm
    if tpm is not None:
        values["tokens_per_minute"] = tpm
    with admin_transaction() as (_, session):
        key = set_key_limits(session, prefix, values, actor=cli_actor())
        rpm, tpm = key.requests_per_minute, key.tokens_per_minute
        day, month = key.budget_day, key.budget_month
    typer.echo(
        f"{prefix}: rpm={rpm or '-'} tpm={tpm or '-'} budget day={day or '-'} month={month or '-'}"
    )


def register(app: typer.Typer) -> None:
    """Add the keys command group to the CLI."""
    app.add_typer(keys_app, name="keys")
