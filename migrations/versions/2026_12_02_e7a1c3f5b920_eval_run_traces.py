"""eval_runs.trace_id, eval_runs.span_id, alerts.trace_id: an eval run as a trace

Revision ID: e7a1c3f5b920
Revises: b2c4d6e8f013
Create Date: 2026-12-02 14:00:00.000000

A run is one trace (its run span, one child span per question); an alert names the trace of
the run that fired it, so on-call can open it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e7a1c3f5b920"
down_revision: str | None = "b2c4d6e8f013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("eval_runs", sa.Column("trace_id", sa.String(length=32), nullable=True))
    op.add_column("eval_runs", sa.Column("span_id", sa.String(length=16), nullable=True))
    op.add_column("alerts", sa.Column("trace_id", sa.String(length=32), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("alerts", "trace_id")
    op.drop_column("eval_runs", "span_id")
    op.drop_column("eval_runs", "trace_id")
