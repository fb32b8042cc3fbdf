"""key limits, retention classes on call tables, audit log

Revision ID: 5e1c7a9b3d20
Revises: ddce75589c10
Create Date: 2026-11-30 09:00:00.000000

The three call tables gain `retention_days`, the retention class copied from the team when a
call is written, and it joins their primary key: on Postgres new day partitions are themselves
partitioned by LIST (retention_days), and a partitioned table's key must contain every
partitioning column. Day partitions made before this revision stay plain; the retention job
deletes from them row by row.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "5e1c7a9b3d20"
down_revision: str | None = "ddce75589c10"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CALL_TABLES = (("calls", "id"), ("call_logprobs", "call_id"), ("call_bodies", "call_id"))


def _retention_column() -> sa.Column[int]:
    return sa.Column("retention_days", sa.SmallInteger(), server_default="0", nullable=False)


def upgrade() -> None:
    """Apply this revision."""
    postgres = op.get_bind().dialect.name == "postgresql"
    for table, id_column in CALL_TABLES:
        key = [id_column, "created_at", "retention_days"]
        if postgres:
            op.add_column(table, _retention_column())
            op.drop_constraint(f"pk_{table}", table, type_="primary")
            op.create_primary_key(f"pk_{table}", table, key)
        else:
            with op.batch_alter_table(table, recreate="always") as batch:
                batch.add_column(_retention_column())
                batch.drop_constraint(f"pk_{table}", type_="primary")
                batch.create_primary_key(f"pk_{table}", key)
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("requests_per_minute", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("tokens_per_minute", sa.Integer(), nullable=True))
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.Column("actor", sa.String(length=160), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=True),
        sa.Column("target", sa.String(length=256), nullable=True),
        sa.Column(
            "details",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index(
        "ix_audit_log_action_created", "audit_log", ["action", "created_at"], unique=False
    )


def downgrade() -> None:
    """Revert this revision (rows of the same call in several classes cannot exist, so the
    old two-column keys hold)."""
    op.drop_index("ix_audit_log_action_created", table_name="audit_log")
    op.drop_table("audit_log")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("tokens_per_minute")
        batch.drop_column("requests_per_minute")
    postgres = op.get_bind().dialect.name == "postgresql"
    for table, id_column in CALL_TABLES:
        if postgres:
            op.drop_constraint(f"pk_{table}", table, type_="primary")
            op.create_primary_key(f"pk_{table}", table, [id_column, "created_at"])
            op.drop_column(table, "retention_days")
        else:
            with op.batch_alter_table(table, recreate="always") as batch:
                batch.drop_constraint(f"pk_{table}", type_="primary")
                batch.create_primary_key(f"pk_{table}", [id_column, "created_at"])
                batch.drop_column("retention_days")
