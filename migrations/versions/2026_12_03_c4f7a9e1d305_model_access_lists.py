"""teams.allowed_models, api_keys.allowed_models: the models a team's keys may call

Revision ID: c4f7a9e1d305
Revises: 9c4e2a7d1b63
Create Date: 2026-12-03 13:40:00.000000

Each is a JSON list of model names or fnmatch patterns; NULL (every existing row) allows every
configured model, as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "c4f7a9e1d305"
down_revision: str | None = "9c4e2a7d1b63"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column(
        "teams",
        sa.Column(
            "allowed_models",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
    )
    op.add_column(
        "api_keys",
        sa.Column(
            "allowed_models",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("api_keys", "allowed_models")
    op.drop_column("teams", "allowed_models")
