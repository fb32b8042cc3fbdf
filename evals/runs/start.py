"""Start (or resume) a run: mark it running and list the samples still to answer."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.orm import Session

from evals.errors import ConflictError, NotFoundError
from evals.runs.repository import finalizations as finalization_repo
from evals.runs.repository import runs as run_repo
from evals.runs.repository import samples as sample_repo

ACTIVE = ("pending", "running")


def begin_run(session: Session, run_id: int, *, resume: bool = False) -> list[int]:
    """Mark the run running and return its unfinished sample ids (the work to fan out).

    `resume` first releases samples claimed by a worker that died, and allows a run that
    already ended (failed or partial) to go again.
    """
    run = run_repo.run_by_id(session, run_id, None)
    if run is None:
        raise NotFoundError(f"No run {run_id}.", "run")
    if run.status not in ACTIVE and not resume:
        raise ConflictError(
            f"Run {run_id} is {run.status}; resume it (`plumbline eval run --resume {run_id}`) "
            "to retry its unanswered samples.",
            "run",
        )
    if resume:
        sample_repo.release_running(session, run_id)
        finalization_repo.reset(session, run_id)
    values: dict[str, object] = {"status": "running", "error": None, "finished_at": None}
    if run.started_at is None:
        values["started_at"] = datetime.now(UTC)
    run_repo.update_run(session, run_id, **values)
    return sample_repo.unfinished_ids(session, run_id)


def record_max_model_len(session: Session, run_id: int, models: dict[str, int | None]) -> None:
    """Store the served context size of the run's model (from the gateway's /v1/models)."""
    run = run_repo.run_by_id(session, run_id, None)
    assert run is not None
    length = models.get(run.model)
    if length is not None:
        run.max_model_len = length
