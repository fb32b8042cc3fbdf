"""FastAPI dependencies: the gateway state, a database session and the authenticated caller."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from gateway.auth.keys import KeyInfo, bearer_token
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


CallerDep = Annotated[KeyInfo, Depends(get_caller)]


def require_admin(caller: CallerDep) -> KeyInfo:
    """The caller, who must hold an admin key."""
    if not caller.is_admin:
        raise GatewayError(403, "This route needs an admin key.")
    return caller


AdminDep = Annotated[KeyInfo, Depends(require_admin)]


def team_scope(caller: KeyInfo) -> int | None:
    """The team a caller may see; None means every team (admin)."""
    return None if caller.is_admin else caller.team_id
