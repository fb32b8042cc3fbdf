"""`plumbline end-users delete`: honour a deletion request for one end user of a team."""

from __future__ import annotations

from typing import Annotated

import typer

from apps.cli.admin_context import admin_transaction, cli_actor

end_users_app = typer.Typer(no_args_is_help=True, help="End users' data (X-Plumbline-User).")


@end_users_app.command("delete")
def delete(
    end_user: Annotated[str, typer.Argument(help="The X-Plumbline-User value to forget")],
    team: Annotated[str, typer.Option(help="The team whose end user this is")],
) -> None:
    """Delete the end user's calls, logprobs, bodies, live samples and eval answer texts."""
    from gateway.retention.user_deletion import delete_end_user

    with admin_transaction() as (settings, session):
        done = delete_end_user(
            session, team, end_user, settings.key_salt.get_secret_value(), actor=cli_actor()
        )
    rows = ", ".join(f"{table}={count}" for table, count in sorted(done.deleted_rows.items()))
    typer.echo(
        f"deleted {rows}, eval_samples_cleared={done.eval_samples_cleared} "
        f"(audit entry {done.audit_id}, end user {done.end_user_digest})"
    )


def register(app: typer.Typer) -> None:
    """Add the end-users command group to the CLI."""
    app.add_typer(end_users_app, name="end-users")
