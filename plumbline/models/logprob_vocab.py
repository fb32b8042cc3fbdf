"""The logprob vocabulary: one row per token key, so v3 logprob rows store small ids."""

from __future__ import annotations

from sqlalchemy import Integer, LargeBinary
from sqlalchemy.orm import Mapped, mapped_column

from plumbline.db.base import Base


class LogprobVocab(Base):
    """A token key (its JSON string content as sent, NUL, its `bytes` JSON as sent) and its id."""

    __tablename__ = "logprob_vocab"

    # Assigned by the database, so every recorder of every replica agrees on them.
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[bytes] = mapped_column(LargeBinary, unique=True)
