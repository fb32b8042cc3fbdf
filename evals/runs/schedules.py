"""Scheduled runs: each suite's cron schedule, read from the database on every beat tick.

Schedules are in UTC; six fields mean seconds come last (`*/10 * * * * *`). Only the latest
slot is run, and only while it is fresh (within `grace_s`): a scheduler that was down does not
replay every slot it missed. The slot is the run's `scheduled_for`, unique per suite, so two
schedulers ticking at once create (and start) one run.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from croniter import croniter
from sqlalchemy.orm import Session

from evals.errors import EvalServiceError
from evals.runs.creation import create_run
from evals.suites import repository as suite_repo

log = logging.getLogger(__name__)


def due_slot(schedule: str, now: datetime, grace_s: float) -> datetime | None:
    """The latest slot of `schedule` at or before `now`, if it is at most `grace_s` old."""
    # get_prev is strictly earlier than its start, so start just after `now` (cron has whole
    # seconds): a slot falling exactly on `now` is due now.
    start = now.replace(microsecond=0) + timedelta(seconds=1)
    slot: datetime = croniter(schedule, start).get_prev(datetime)
    return slot if (now - slot).total_seconds() <= grace_s else None


def create_due_runs(session: Session, now: datetime, grace_s: float) -> list[int]:
    """Create the run of every suite whose slot is due; ids of the runs this call created."""
    created = []
    for suite, _team in suite_repo.list_suites(session, None):
        schedule = (suite.settings or {}).get("schedule")
        if not schedule:
            continue
        slot = due_slot(str(schedule), now, grace_s)
        if slot is None:
            continue
        try:
            run = create_run(
                session, suite.id, team_id=None, trigger="schedule", scheduled_for=slot
            )
        except EvalServiceError as error:
            log.warning("suite %s: scheduled run not created: %s", suite.name, error.message)
            continue
        if run.created:
            log.info("suite %s: run %s created for %s", suite.name, run.run_id, slot.isoformat())
            created.append(run.run_id)
    return created
