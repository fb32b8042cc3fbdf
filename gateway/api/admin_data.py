"""Routes: delete an end user's data, run the retention job, read the audit log (admin only)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query

from gateway.api.admin_schemas import (
    AuditList,
    AuditOut,
    DeletionOut,
    EndUserDeletion,
    RetentionOut,
)
from gateway.api.deps import AdminDep, StateDep
from gateway.auth.audit import audit_entries
from gateway.retention.service import apply_retention
from gateway.retention.user_deletion import delete_end_user

router = APIRouter(prefix="/api/admin", tags=["admin"])


@router.post("/end-users/delete", response_model=DeletionOut)
def delete_user_data(body: EndUserDeletion, caller: AdminDep, state: StateDep) -> DeletionOut:
    """Delete an end user's calls, logprobs, bodies, live samples and eval answer texts."""
    with state.sessions() as session, session.begin():
        done = delete_end_user(
            session,
            body.team,
            body.end_user,
            state.settings.key_salt.get_secret_value(),
            actor=caller.actor,
        )
    return DeletionOut(
        team=done.team,
        end_user_digest=done.end_user_digest,
        deleted_rows=done.deleted_rows,
        eval_samples_cleared=done.eval_samples_cleared,
        audit_id=done.audit_id,
    )


@router.post("/retention/apply", response_model=RetentionOut)
def run_retention(caller: AdminDep, state: StateDep) -> RetentionOut:
    """Run the retention job now (workers also run it on a schedule)."""
    with state.sessions() as session, session.begin():
        report = apply_retention(session, datetime.now(UTC), actor=caller.actor)
    return RetentionOut(**report.as_dict())


@router.get("/audit", response_model=AuditList)
def audit_log(
    caller: AdminDep,
    state: StateDep,
    action: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> AuditList:
    """Administrative actions, newest first."""
    with state.sessions() as session:
        entries = audit_entries(session, action, limit)
        return AuditList(data=[AuditOut.model_validate(e) for e in entries])
