"""calls.audio_seconds: the audio a speech-to-text call took in

Revision ID: a8d3c5e7f912
Revises: 3c9e1d7a5b42
Create Date: 2026-12-02 06:30:00.000000

Speech-to-text calls are priced per audio minute; the duration is kept with the call so its
input cost can be checked (and re-priced) later.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a8d3c5e7f912"
down_revision: str | None = "3c9e1d7a5b42"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("calls", sa.Column("audio_seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("calls", "audio_seconds")
