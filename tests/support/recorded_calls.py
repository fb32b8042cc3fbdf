"""Call rows as the gateway's recorder writes them: a tick or so after the answer."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session, sessionmaker

from plumbline.models import Call
from tests.support.waiting import wait_until


def recorded_calls(
    sessions: sessionmaker[Session],
    *where: ColumnElement[bool],
    at_least: int,
    timeout_s: float = 15.0,
) -> Sequence[Call]:
    """The calls matching `where`, once at least `at_least` are written (or the time is up)."""

    def found() -> Sequence[Call]:
        with sessions() as session:
            return session.scalars(select(Call).where(*where).order_by(Call.created_at)).all()

    try:
        wait_until(
            lambda: len(found()) >= at_least,
            timeout=timeout_s,
            what=f"{at_least} recorded calls",
            poll=0.1,
        )
    except AssertionError:
        pass
    return found()  # short of `at_least` after the time: the caller's count says what is missing
