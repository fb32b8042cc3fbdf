"""usage rollups per endpoint (the call kind), and which rolled hours to re-roll for it

Revision ID: 4f40b2a4ff00
Revises: a8d3c5e7f912
Create Date: 2026-12-02 06:30:00.000000

`usage_rollups` gains `endpoint`, the route of the calls it sums (`/v1/chat/completions`, ...).
Rows rolled up before keep NULL: their calls were not kept apart by kind. Backfill: an hour whose
calls are all still in `calls` (their count equals what its all-teams rows counted, so neither
retention nor a deletion took any) is marked dirty, with its day, and the rollup job rolls it
again per endpoint; the usage endpoint reads it from `calls` until then. Hours whose calls are
partly gone keep their NULL rows: re-rolling them would lose usage history. Hours older than
the job's look-back (400 days) are left alone, as the job would never re-roll them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "4f40b2a4ff00"
down_revision: str | None = "a8d3c5e7f912"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REROLL_WHOLE_HOURS = """
UPDATE usage_rollup_periods p SET dirty = true
WHERE p.period_hours = 1
  AND NOT p.dirty
  AND p.period_start >= now() - interval '400 days'
  AND (
    SELECT sum(r.calls) FROM usage_rollups r
    WHERE r.period_hours = 1 AND r.period_start = p.period_start AND r.all_teams
  ) = (
    SELECT count(*) FROM calls c
    WHERE c.created_at >= p.period_start AND c.created_at < p.period_start + interval '1 hour'
  )
"""
REROLL_THEIR_DAYS = """
UPDATE usage_rollup_periods d SET dirty = true
WHERE d.period_hours = 24
  AND EXISTS (
    SELECT 1 FROM usage_rollup_periods h
    WHERE h.period_hours = 1 AND h.dirty
      AND h.period_start >= d.period_start AND h.period_start < d.period_start + interval '1 day'
  )
"""


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("usage_rollups", sa.Column("endpoint", sa.String(length=64), nullable=True))
    if op.get_bind().dialect.name == "postgresql":  # SQLite keeps no rollups
        op.execute(REROLL_WHOLE_HOURS)
        op.execute(REROLL_THEIR_DAYS)


def downgrade() -> None:
    """Revert this revision (rows split by endpoint stay; readers sum rows of one group)."""
    op.drop_column("usage_rollups", "endpoint")
