"""response owners: the team and backend of each stored Responses API response

Revision ID: 3f9a1c5d7e21
Revises: 7b2d4e6f8a10
Create Date: 2026-12-02 06:20:00.000000

vLLM keeps stored responses without an owner; the gateway checks this table before a
retrieve, cancel or `previous_response_id` reaches one.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3f9a1c5d7e21"
down_revision: str | None = "7b2d4e6f8a10"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "response_owners",
        sa.Column("response_id", sa.String(length=64), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(length=256), nullable=False),
        sa.Column("backend", sa.String(length=512), nullable=False),
        sa.Column("background", sa.Boolean(), nullable=False),
        sa.Column("added_top_logprobs", sa.Integer(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["team_id"],
            ["teams.id"],
            name=op.f("fk_response_owners_team_id_teams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("response_id", name=op.f("pk_response_owners")),
    )
    op.create_index(
        "ix_response_owners_team_model", "response_owners", ["team_id", "model"], unique=False
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index("ix_response_owners_team_model", table_name="response_owners")
    op.drop_table("response_owners")
