"""Routes: GET /api/calls (filtered, paginated) and GET /api/calls/{id}."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from gateway.api.deps import ReadCallerDep, SessionDep, team_scope
from gateway.api.schemas import CallBodyOut, CallDetail, CallLogprobsOut, CallPage, CallSummary
from gateway.errors import GatewayError
from gateway.proxy.call_kinds.served import no_logprobs_reason
from gateway.recording import call_queries
from plumbline import logprob_read

router = APIRouter(prefix="/api/calls", tags=["calls"])


def _encode_cursor(created_at: datetime, call_id: str) -> str:
    return base64.urlsafe_b64encode(f"{created_at.isoformat()}|{call_id}".encode()).decode()


def _decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        created, _, call_id = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        return datetime.fromisoformat(created), call_id
    except (ValueError, UnicodeDecodeError):
        raise GatewayError(
            400, "Invalid cursor: pass back `next_cursor` unchanged.", "cursor"
        ) from None


@router.get("", response_model=CallPage)
def list_calls(
    caller: ReadCallerDep,
    session: SessionDep,
    feature: str | None = None,
    model: str | None = None,
    status: Annotated[
        str | None, Query(description="ok, error, cancelled, or an HTTP status code")
    ] = None,
    source: Annotated[str | None, Query(description="product, eval or live_sample")] = None,
    endpoint: Annotated[
        str | None, Query(max_length=64, description="the call kind's route, e.g. /v1/responses")
    ] = None,
    since: datetime | None = None,
    until: datetime | None = None,
    trace_id: Annotated[
        str | None,
        Query(pattern="^[0-9a-f]{32}$", description="a W3C trace id: 32 lowercase hex digits"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: str | None = None,
) -> CallPage:
    """Calls of the caller's team, newest first."""
    flt = call_queries.CallFilter(
        team_scope(caller), feature, model, status, source, since, until, endpoint, trace_id
    )
    after = _decode_cursor(cursor) if cursor else None
    rows = call_queries.page_of_calls(session, flt, limit, after)
    next_cursor = _encode_cursor(rows[-1].created_at, rows[-1].id) if len(rows) == limit else None
    return CallPage(data=[CallSummary.model_validate(r) for r in rows], next_cursor=next_cursor)


@router.get("/{call_id}", response_model=CallDetail)
def get_call(call_id: str, caller: ReadCallerDep, session: SessionDep) -> CallDetail:
    """One call with its logprobs and stored bodies."""
    call = call_queries.one_call(session, call_id, team_scope(caller))
    if call is None:
        raise GatewayError(404, f"No call `{call_id[:64]}` is visible to this key.", "call_id")
    detail = CallDetail.model_validate(call)
    logprobs = call_queries.logprobs_of(session, call)
    if logprobs is not None:
        detail.logprobs = CallLogprobsOut(
            format=logprobs.format,
            top_k=logprobs.top_k,
            token_count=logprobs.token_count,
            choices=logprob_read.read_rows(session, [(logprobs.payload, logprobs.topk)])[0],
            top_logprobs_expired=logprob_read.topk_expired(logprobs.payload, logprobs.topk),
        )
    else:
        detail.logprobs_note = no_logprobs_reason(call.endpoint)
    body = call_queries.body_of(session, call)
    if body is not None:
        detail.body = CallBodyOut(request=body.request_body, response=body.response_body)
    return detail
