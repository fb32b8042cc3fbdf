"""usage rollups per hour and day, and a BRIN index on calls.created_at

Revision ID: 7b2d4e6f8a10
Revises: 5e1c7a9b3d20
Create Date: 2026-11-30 18:30:00.000000

The usage endpoint reads whole hours and days from these tables and only the window's ragged
edges from `calls`, so a 30-day window over millions of calls costs a few thousand rows.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7b2d4e6f8a10"
down_revision: str | None = "5e1c7a9b3d20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "usage_rollups",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("period_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("period_hours", sa.Integer(), nullable=False),
        sa.Column("all_teams", sa.Boolean(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=True),
        sa.Column("feature", sa.String(length=128), nullable=True),
        sa.Column("model", sa.String(length=256), nullable=True),
        sa.Column("calls", sa.BigInteger(), nullable=False),
        sa.Column("errors", sa.BigInteger(), nullable=False),
        sa.Column("prompt_tokens", sa.BigInteger(), nullable=False),
        sa.Column("completion_tokens", sa.BigInteger(), nullable=False),
        sa.Column("input_cost", sa.Float(), nullable=False),
        sa.Column("output_cost", sa.Float(), nullable=False),
        sa.Column("ttft_hist", sa.LargeBinary(), nullable=False),
        sa.Column("itl_hist", sa.LargeBinary(), nullable=False),
        sa.Column("e2e_hist", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage_rollups")),
    )
    op.create_index(
        "ix_usage_rollups_period", "usage_rollups", ["period_hours", "period_start"], unique=False
    )
    op.create_index(
        "ix_calls_created_brin", "calls", ["created_at"], postgresql_using="brin", unique=False
    )
    op.create_table(
        "usage_rollup_periods",
        sa.Column("period_hours", sa.Integer(), nullable=False),
        sa.Column("period_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("dirty", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint(
            "period_hours", "period_start", name=op.f("pk_usage_rollup_periods")
        ),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("usage_rollup_periods")
    op.drop_index("ix_calls_created_brin", table_name="calls")
    op.drop_index("ix_usage_rollups_period", table_name="usage_rollups")
    op.drop_table("usage_rollups")
