"""Roll up the generated calls as the worker's beat task would, timed."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select

from gateway.usage.rollup_job import run_rollups
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import UsageRollup


@dataclass(frozen=True)
class RollupBackfill:
    """How long the first pass took, what it rolled, and how many rollup rows it stored."""

    seconds: float
    hours: int
    days: int
    rows: int


def backfill_rollups(url: str) -> RollupBackfill:
    """One pass of the rollup job over everything generated."""
    engine = create_db_engine(url)
    try:
        sessions = make_session_factory(engine)
        began = time.perf_counter()
        report = run_rollups(sessions, datetime.now(UTC))
        seconds = time.perf_counter() - began
        with sessions() as session:
            rows = int(session.scalar(select(func.count()).select_from(UsageRollup)) or 0)
    finally:
        engine.dispose()
    print(f"rollups: {report.hours} hours, {report.days} days in {seconds:.1f} s", flush=True)
    return RollupBackfill(seconds, report.hours, report.days, rows)
