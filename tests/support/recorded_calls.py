"""Call rows as the gateway's recorder writes them: a tick or so after the answer."""

from __future__ import annotations

import time
from collections.abc import Sequence

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session, sessionmaker

from plumbline.models import Call


def recorded_calls(
    sessions: sessionmaker[Session],
    *where: ColumnElement[bool],
    at_least: int,
    timeout_s: float = 15.0,
) -> Sequence[Call]:
    """The calls matching `where`, once at least `at_least` are written (or the time is up)."""
    deadline = time.monotonic() + timeout_s
    while True:
        with sessions() as session:
            found = session.scalars(select(Call).where(*where).order_by(Call.created_at)).all()
        if len(found) >= at_least or time.monotonic() > deadline:
            return found
        time.sleep(0.1)
