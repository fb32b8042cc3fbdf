"""calls.trace_id, calls.span_id: the call's W3C trace and the gateway's span in it

Revision ID: 6d1f2b8c4e90
Revises: 4f40b2a4ff00
Create Date: 2026-12-02 07:00:00.000000

An engineer looking at a trace in their tracing backend finds the recorded call by its trace
id (indexed), and the call's view names the trace to open.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "6d1f2b8c4e90"
down_revision: str | None = "4f40b2a4ff00"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("calls", sa.Column("trace_id", sa.String(length=32), nullable=True))
    op.add_column("calls", sa.Column("span_id", sa.String(length=16), nullable=True))
    op.create_index("ix_calls_trace_id", "calls", ["trace_id"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index("ix_calls_trace_id", table_name="calls")
    op.drop_column("calls", "span_id")
    op.drop_column("calls", "trace_id")
