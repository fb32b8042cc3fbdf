"""`plumbline keys`: create, list and revoke API keys."""

from __future__ import annotations

from typing import Annotated

import typer

keys_app = typer.Typer(no_args_is_help=True, help="Manage API keys (only hashes are stored).")


@keys_app.command("create")
def create(
    team: Annotated[str, typer.Option(help="Team the key belongs to (created if new)")],
    admin: Annotated[bool, typer.Option(help="Key may see every team's data")] = False,
    name: Annotated[str, typer.Option(help="A label for the key")] = "default",
) -> None:
    """Create a key and print it once."""
    from gateway.auth.service import create_key
    from plumbline.db import create_db_engine, make_session_factory
    from plumbline.settings import Settings

    settings = Settings()
    engine = create_db_engine(settings.database.url)
    try:
        with make_session_factory(engine)() as session, session.begin():
            issued = create_key(
                session, team, settings.key_salt.get_secret_value(), admin=admin, name=name
            )
    finally:
        engine.dispose()
    typer.echo(issued.plaintext)
    typer.echo(
        f"team={issued.team} admin={issued.is_admin} prefix={issued.prefix} "
        "(store this key now: it cannot be shown again)",
        err=True,
    )


@keys_app.command("list")
def list_keys() -> None:
    """List keys by prefix (never the secret)."""
    from gateway.auth import repository
    from plumbline.db import create_db_engine, make_session_factory
    from plumbline.settings import Settings

    engine = create_db_engine(Settings().database.url)
    try:
        with make_session_factory(engine)() as session:
            for key, team in repository.list_keys(session):
                state = "revoked" if key.revoked_at else "active"
                role = "admin" if key.is_admin else "team"
                typer.echo(f"{key.prefix}  {team.name:20}  {role:5}  {state:7}  {key.name}")
    finally:
        engine.dispose()


@keys_app.command("revoke")
def revoke(
    prefix: Annotated[str, typer.Argument(help="The key's prefix (see `keys list`)")],
) -> None:
    """Revoke a key; gateways stop accepting it within 30 seconds."""
    from gateway.auth import repository
    from plumbline.db import create_db_engine, make_session_factory
    from plumbline.settings import Settings

    engine = create_db_engine(Settings().database.url)
    try:
        with make_session_factory(engine)() as session, session.begin():
            found = repository.revoke_key(session, prefix)
    finally:
        engine.dispose()
    if not found:
        typer.echo(f"no active key with prefix {prefix}", err=True)
        raise typer.Exit(1)
    typer.echo(f"revoked {prefix}")


def register(app: typer.Typer) -> None:
    """Add the keys command group to the CLI."""
    app.add_typer(keys_app, name="keys")
