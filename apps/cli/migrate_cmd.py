"""`plumbline migrate`: bring the database schema to the newest revision."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the migrate command to the CLI."""

    @app.command("migrate")
    def migrate(
        database_url: Annotated[
            str | None, typer.Option(help="Database URL (default: PLUMBLINE_DATABASE__URL)")
        ] = None,
    ) -> None:
        """Apply every pending Alembic migration."""
        from plumbline.migrate import upgrade_to_head
        from plumbline.settings import Settings

        url = database_url or Settings().database.url
        upgrade_to_head(url)
        typer.echo(f"database is at the newest schema: {url.split('@')[-1]}")
