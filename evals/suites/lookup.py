"""Find a suite by id or by name, as the CLI and API name it."""

from __future__ import annotations

from sqlalchemy.orm import Session

from evals.errors import EvalServiceError, NotFoundError
from evals.suites import repository as suite_repo
from plumbline.models import EvalSuite


def find_suite(
    session: Session, ref: str, *, team_id: int | None, team: str | None = None
) -> EvalSuite:
    """The suite named `ref` (or with id `ref`), optionally of a named team."""
    if ref.isdigit():
        found = suite_repo.suite_by_id(session, int(ref), team_id)
        if found is not None:
            return found
    matches = suite_repo.suites_named(session, ref, team_id)
    if team is not None:
        matches = [s for s in matches if suite_repo.team_name(session, s.team_id) == team]
    if not matches:
        raise NotFoundError(
            f"No suite {ref!r} found; import it first with `plumbline eval import FILE`.", "suite"
        )
    if len(matches) > 1:
        teams = ", ".join(sorted(suite_repo.team_name(session, s.team_id) for s in matches))
        raise EvalServiceError(
            f"Several teams have a suite {ref!r} ({teams}); pass --team.", "team"
        )
    return matches[0]


def suite_model(session: Session, suite_id: int, *, team_id: int | None) -> str | None:
    """The model a suite's runs call, if the team (None: any team) may see the suite."""
    found = suite_repo.suite_by_id(session, suite_id, team_id)
    return None if found is None else found.model
