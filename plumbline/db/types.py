"""Column types that map to the best native type on each dialect."""

from __future__ import annotations

from sqlalchemy import JSON, BigInteger, Integer
from sqlalchemy.dialects.postgresql import JSONB

JsonDocument = JSON().with_variant(JSONB(), "postgresql")
# SQLite only auto-increments INTEGER PRIMARY KEY, so big ids degrade to Integer there.
BigId = BigInteger().with_variant(Integer(), "sqlite")
