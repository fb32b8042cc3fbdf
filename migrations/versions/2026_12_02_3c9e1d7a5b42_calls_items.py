"""calls.items: the inputs, documents or pairs of a pooling call

Revision ID: 3c9e1d7a5b42
Revises: 3f9a1c5d7e21
Create Date: 2026-12-02 06:10:00.000000

Embeddings, pooling, classify, score and rerank calls count their work in items as well as
tokens; generating calls leave it null.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3c9e1d7a5b42"
down_revision: str | None = "3f9a1c5d7e21"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("calls", sa.Column("items", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    # SQLite drops a column by copying the table; Postgres alters the partitioned parent.
    with op.batch_alter_table("calls") as batch:
        batch.drop_column("items")
