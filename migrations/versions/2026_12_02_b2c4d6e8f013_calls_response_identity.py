"""calls.response_id, calls.response_model: the backend's response id and answering model

Revision ID: b2c4d6e8f013
Revises: 6d1f2b8c4e90
Create Date: 2026-12-02 13:10:00.000000

The id a backend gave its answer (`chatcmpl-...`, `resp_...`) ties a call to the backend's own
logs and to the span's `gen_ai.response.id`; the model is the one the backend says answered.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b2c4d6e8f013"
down_revision: str | None = "6d1f2b8c4e90"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("calls", sa.Column("response_id", sa.String(length=256), nullable=True))
    op.add_column("calls", sa.Column("response_model", sa.String(length=256), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("calls", "response_model")
    op.drop_column("calls", "response_id")
