"""`plumbline keys`: create, list, rotate and revoke API keys, set their limits and models."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer

from apps.cli.admin_context import admin_transaction, cli_actor, fail
from apps.cli.model_options import AllModelsOption, ModelsOption, model_values, shown

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
    scope: Annotated[
        list[str] | None,
        typer.Option(
            "--scope",
            help="inference, read or evals; repeat to combine (default: all three)",
        ),
    ] = None,
    expires: Annotated[
        str | None,
        typer.Option(help="When it stops working: 2027-03-31 (through that day, UTC) or 90d"),
    ] = None,
    note: Annotated[str | None, typer.Option(help="Who holds the key and what for")] = None,
    models: ModelsOption = None,
) -> None:
    """Create a key and print it once; with --models it may call only those of its team's."""
    from datetime import UTC

    from gateway.auth.key_terms import key_terms
    from gateway.auth.service import create_key

    with admin_transaction() as (settings, session):
        terms = key_terms(scope, expires, note, admin=admin, now=datetime.now(UTC))
        issued = create_key(
            session,
            team,
            settings.key_salt.get_secret_value(),
            admin=admin,
            name=name,
            requests_per_minute=rpm,
            tokens_per_minute=tpm,
            budgets=_budgets(budget_day, budget_month),
            allowed_models=model_values(models, False).get("allowed_models"),
            actor=cli_actor(),
            terms=terms,
        )
    expiry = terms.expires_at.isoformat(timespec="seconds") if terms.expires_at else "never"
    typer.echo(issued.plaintext)
    typer.echo(
        f"team={issued.team} admin={issued.is_admin} scopes={terms.scopes or 'admin'} "
        f"expires={expiry} prefix={issued.prefix} (store this key now: it cannot be shown again)",
        err=True,
    )


@keys_app.command("list")
def list_keys(
    team: Annotated[str | None, typer.Option(help="Only this team's keys")] = None,
) -> None:
    """List keys by prefix (never the secret)."""
    from datetime import UTC

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
            limits = (
                f"rpm={out.requests_per_minute or '-'} tpm={out.tokens_per_minute or '-'} "
                f"models={shown(out.allowed_models, 'team')}"
            )
            typer.echo(
                f"{out.prefix}  {out.team:20}  {role:5}  {out.state:8}  {limits}  {out.name}  "
                f"scopes={','.join(out.scopes)}  expires={_when(out.expires_at, 'never')}  "
                f"last_used={_when(out.last_used_at, 'never')}"
                + (f"  note={out.note}" if out.note else "")
            )


def _when(moment: datetime | None, missing: str) -> str:
    return moment.isoformat(timespec="seconds") if moment else missing


@keys_app.command("revoke")
def revoke(
    prefix: Annotated[str, typer.Argument(help="The key's prefix (see `keys list`)")],
) -> None:
    """Revoke a key: gateways stop accepting it within about a second with key_invalidation
    channel `redis`, else within limits.key_cache_ttl_s (30 s by default)."""
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
    """Issue a new key like the old (team, admin, scopes, expiry, note, name, limits); revoke
    the old one."""
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
    models: ModelsOption = None,
    all_models: AllModelsOption = False,
) -> None:
    """Set the given limits, budgets or models of a key (others stay); the team's apply too."""
    from gateway.auth.service import set_key_limits

    values: dict[str, Any] = model_values(models, all_models)
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
        rpm, tpm, allowed = key.requests_per_minute, key.tokens_per_minute, key.allowed_models
        day, month = key.budget_day, key.budget_month
    typer.echo(
        f"{prefix}: rpm={rpm or '-'} tpm={tpm or '-'} models={shown(allowed, 'team')} "
        f"budget day={day or '-'} month={month or '-'}"
    )


def register(app: typer.Typer) -> None:
    """Add the keys command group to the CLI."""
    app.add_typer(keys_app, name="keys")
