"""call_logprobs.topk and teams.topk_retention_days: top-k alternatives kept apart, kept shorter

Revision ID: c4e6a8b0d214
Revises: c5d7e9f1a3b6
Create Date: 2026-12-03 13:40:00.000000

v2 logprob rows hold the sampled tokens in `payload` and the alternatives in `topk`, so the
retention job can null `topk` after a team's `topk_retention_days` without rewriting the
sampled data. Expand only: existing rows keep everything in `payload` (v1) and read as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c4e6a8b0d214"
down_revision: str | None = "c5d7e9f1a3b6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("call_logprobs", sa.Column("topk", sa.LargeBinary(), nullable=True))
    op.add_column("teams", sa.Column("topk_retention_days", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("teams", "topk_retention_days")
    op.drop_column("call_logprobs", "topk")
