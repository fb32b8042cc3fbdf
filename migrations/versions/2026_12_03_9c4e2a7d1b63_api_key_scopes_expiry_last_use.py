"""api_keys.scopes, expires_at, last_used_at, note: key scopes, expiry and hygiene

Revision ID: 9c4e2a7d1b63
Revises: e7a1c3f5b920
Create Date: 2026-12-03 13:40:00.000000

Expand only: every column is nullable and NULL keeps today's behaviour (a NULL scopes column is
inference, read and evals; a NULL expires_at never expires).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9c4e2a7d1b63"
down_revision: str | None = "e7a1c3f5b920"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("api_keys", sa.Column("scopes", sa.String(length=64), nullable=True))
    op.add_column("api_keys", sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("api_keys", sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("api_keys", sa.Column("note", sa.String(length=500), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("api_keys", "note")
    op.drop_column("api_keys", "last_used_at")
    op.drop_column("api_keys", "expires_at")
    op.drop_column("api_keys", "scopes")
