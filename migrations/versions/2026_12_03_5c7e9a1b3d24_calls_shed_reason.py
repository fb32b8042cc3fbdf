"""calls.shed_reason: why load shedding refused a call

Revision ID: 5c7e9a1b3d24
Revises: c4f7a9e1d305
Create Date: 2026-12-03 13:40:00.000000

A saturated model sheds eval and live-resample calls first, then product calls of teams above
their fair share; each shed call keeps its reason. Existing rows stay NULL (not shed).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5c7e9a1b3d24"
down_revision: str | None = "c4f7a9e1d305"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("calls", sa.Column("shed_reason", sa.String(32), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("calls", "shed_reason")
