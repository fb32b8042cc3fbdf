"""Run Alembic migrations programmatically (used by `plumbline migrate`, the demo and tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

import migrations


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at the bundled migrations and the given database."""
    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    config.set_main_option("file_template", "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s")
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade_to_head(url: str) -> None:
    """Bring the database at `url` to the newest schema."""
    command.upgrade(alembic_config(url), "head")
