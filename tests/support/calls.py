"""Wait for the gateway's log sink to write a call, then read it back through the repositories."""

from __future__ import annotations

from typing import Any

from gateway.recording import call_queries
from plumbline import logprob_read
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import Call, CallBody
from tests.support.waiting import wait_for


class CallReader:
    """Reads recorded calls from a test database."""

    def __init__(self, database_url: str) -> None:
        self.engine = create_db_engine(database_url)
        self.sessions = make_session_factory(self.engine)

    def wait(self, call_id: str, timeout: float = 15.0) -> Call:
        """The call's row, once the sink has written it."""

        def row() -> Call | None:
            with self.sessions() as session:
                return call_queries.one_call(session, call_id, None)

        return wait_for(row, timeout=timeout, what=f"call {call_id} recorded")

    def logprobs(self, call: Call) -> dict[int, Any] | None:
        """The decoded logprobs of a call."""
        with self.sessions() as session:
            row = call_queries.logprobs_of(session, call)
            if row is None:
                return None
            return logprob_read.read_rows(session, [(row.payload, row.topk)])[0]

    def body(self, call: Call) -> CallBody | None:
        """The stored bodies of a call, if its team stores them."""
        with self.sessions() as session:
            return call_queries.body_of(session, call)

    def close(self) -> None:
        """Release connections."""
        self.engine.dispose()
