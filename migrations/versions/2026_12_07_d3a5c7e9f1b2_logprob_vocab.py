"""logprob_vocab: token keys by id, for v3 logprob rows

Revision ID: d3a5c7e9f1b2
Revises: c4e6a8b0d214
Create Date: 2026-12-07 15:10:00.000000

One global table (not per model): a key is the token's JSON string and `bytes` exactly as a
backend sent them, so it means the same whichever model sent it, and models sharing a tokenizer
share its rows. Expand only: v1 and v2 rows do not refer to it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d3a5c7e9f1b2"
down_revision: str | None = "c4e6a8b0d214"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "logprob_vocab",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_logprob_vocab")),
        sa.UniqueConstraint("key", name=op.f("uq_logprob_vocab_key")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("logprob_vocab")
