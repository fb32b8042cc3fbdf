"""FastAPI dependencies: the gateway state, a database session and the authenticated caller.

Every route declares what it needs: a scoped caller (`InferenceCallerDep`, `ReadCallerDep`,
`EvalsCallerDep`, `AdminDep`) or `PublicRoute`; tests/security/test_key_scopes.py fails for a
route that declares neither.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from gateway.auth.keys import KeyInfo, bearer_token
from gateway.auth.scopes import ADMIN, EVALS, INFERENCE, READ, check_scope, no_key_needed
from gateway.errors import GatewayError
from gateway.state import GatewayState


def get_state(request: Request) -> GatewayState:
    """The app's long-lived objects."""
    state: GatewayState = request.app.state.plumbline
    return state


StateDep = Annotated[GatewayState, Depends(get_state)]


def get_session(state: StateDep) -> Iterator[Session]:
    """One session per request, committed when the handler returns without error."""
    with state.sessions() as session:
        try:
            yield session
            session.commit()
        except SQLAlchemyError:
            session.rollback()
            raise


# "function" scope: commit before the response is sent, so a client that gets a 201 can use
# what it created at once, and a failed commit is the client's error, not a silent loss.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


async def get_caller(request: Request, state: StateDep) -> KeyInfo:
    """The verified key of the caller, or a 401 in OpenAI's shape."""
    token = bearer_token(request.headers.get("authorization"))
    if token is None:
        raise GatewayError(401, "Missing API key: send `Authorization: Bearer <key>`.")
    try:
        info = await state.keys.resolve(token, request.client.host if request.client else None)
    except SQLAlchemyError:
        raise GatewayError(503, "The key store is unreachable; retry shortly.") from None
    if info is None:
        raise GatewayError(401, "Invalid or revoked API key.")
    return info


# Any valid key: routes use one of the scoped callers below instead.
CallerDep = Annotated[KeyInfo, Depends(get_caller)]


class ScopeCheck:
    """A route's declared scope: the caller's key must hold it (admin keys hold all), or a 403."""

    def __init__(self, scope: str) -> None:
        self.scope = scope

    def __call__(self, caller: CallerDep) -> KeyInfo:
        """The caller, once it is known to hold the scope."""
        check_scope(caller, self.scope)
        return caller


def require_scope(scope: str) -> ScopeCheck:
    """The dependency of a route that needs `scope` (see gateway/auth/scopes.py)."""
    return ScopeCheck(scope)


InferenceCallerDep = Annotated[KeyInfo, Depends(require_scope(INFERENCE))]
ReadCallerDep = Annotated[KeyInfo, Depends(require_scope(READ))]
EvalsCallerDep = Annotated[KeyInfo, Depends(require_scope(EVALS))]
AdminDep = Annotated[KeyInfo, Depends(require_scope(ADMIN))]


# The declaration of a route that takes no key: `dependencies=[PublicRoute]`.
PublicRoute = Depends(no_key_needed)


def team_scope(caller: KeyInfo) -> int | None:
    """The team a caller may see; None means every team (admin)."""
    return None if caller.is_admin else caller.team_id
