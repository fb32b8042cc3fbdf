"""teams.budget_day/_month/_soft_fraction, api_keys.budget_day/_month: spend budgets

Revision ID: c5d7e9f1a3b6
Revises: 5c7e9a1b3d24
Create Date: 2026-12-03 14:00:00.000000

Nullable columns: existing teams and keys have no budget, as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c5d7e9f1a3b6"
down_revision: str | None = "5c7e9a1b3d24"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    for table in ("teams", "api_keys"):
        op.add_column(table, sa.Column("budget_day", sa.Numeric(18, 6), nullable=True))
        op.add_column(table, sa.Column("budget_month", sa.Numeric(18, 6), nullable=True))
    op.add_column("teams", sa.Column("budget_soft_fraction", sa.Float(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("teams", "budget_soft_fraction")
    for table in ("api_keys", "teams"):
        op.drop_column(table, "budget_month")
        op.drop_column(table, "budget_day")
