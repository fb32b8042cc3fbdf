"""Routes: POST /api/evals/suites (YAML or JSON), GET the list, GET one suite."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, status

from evals.errors import ForbiddenError
from evals.suites.channels import check_suite_channels
from evals.suites.importer import import_suite, parse_suite
from evals.suites.listing import suite_view, suite_views
from evals.suites.views import SuiteView
from gateway.api.deps import EvalsCallerDep, SessionDep, StateDep, team_scope
from gateway.api.eval_errors import gateway_errors
from gateway.api.eval_schemas import IdPath, SuiteImportOut, SuiteList
from gateway.errors import GatewayError
from gateway.governance.model_refusal import require_model

router = APIRouter(prefix="/api/evals/suites", tags=["evals"])
MAX_SUITE_BYTES = 2 * 1024 * 1024


async def suite_document(request: Request) -> tuple[str, bool]:
    """The request body as text, and whether it is JSON (else YAML)."""
    body = await request.body()
    if len(body) > MAX_SUITE_BYTES:
        raise GatewayError(413, f"A suite may be at most {MAX_SUITE_BYTES} bytes.", "body")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise GatewayError(400, "The suite must be UTF-8 text.", "body") from None
    if not text.strip():
        raise GatewayError(400, "Send the suite as YAML or JSON in the request body.", "body")
    return text, "json" in (request.headers.get("content-type") or "")


DocumentDep = Annotated[tuple[str, bool], Depends(suite_document)]


SUITE_BODY = {
    "requestBody": {
        "required": True,
        "description": "The suite as YAML (the file format) or as the same fields in JSON.",
        "content": {
            "application/yaml": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "object"}},
        },
    }
}


@router.post(
    "",
    response_model=SuiteImportOut,
    status_code=status.HTTP_201_CREATED,
    openapi_extra=SUITE_BODY,
)
def import_suite_route(
    document: DocumentDep, caller: EvalsCallerDep, session: SessionDep, state: StateDep
) -> SuiteImportOut:
    """Create or update a suite from YAML (any non-JSON content type) or a JSON object."""
    text, is_json = document
    with gateway_errors():
        suite = parse_suite(text, "json" if is_json else "yaml")
        if not caller.is_admin and suite.team != caller.team_name:
            raise ForbiddenError(
                f"This key belongs to team {caller.team_name!r}; a suite of team {suite.team!r} "
                "needs a key of that team or an admin key.",
                "team",
            )
        require_model(suite.model, caller.models, state.config.model_names)
        check_suite_channels(suite, state.settings.worker.notify, admin=caller.is_admin)
        done = import_suite(session, suite, source_yaml=None if is_json else text)
        view = suite_view(session, done.suite_id, team_id=None)
    return SuiteImportOut(
        suite=view,
        created=done.created,
        added=list(done.added),
        changed=list(done.changed),
        retired=list(done.retired),
        stale_paraphrases=done.stale_paraphrases,
    )


@router.get("", response_model=SuiteList)
def list_suites(caller: EvalsCallerDep, session: SessionDep) -> SuiteList:
    """Suites of the caller's team (every team for an admin key)."""
    views = suite_views(session, team_id=team_scope(caller))
    return SuiteList(data=views)


@router.get("/{suite_id}", response_model=SuiteView)
def get_suite(suite_id: IdPath, caller: EvalsCallerDep, session: SessionDep) -> SuiteView:
    """One suite with its questions and paraphrase review state."""
    with gateway_errors():
        return suite_view(session, suite_id, team_id=team_scope(caller))
