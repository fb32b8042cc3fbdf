"""CallSink: what the gateway needs of a log sink, in its own process or in a recorder process."""

from __future__ import annotations

from typing import Protocol

from gateway.metering.record import CallRecord
from gateway.recording.sink_stats import SinkStats


class CallSink(Protocol):
    """Takes finished calls from the hot path and gets them into the database."""

    @property
    def stats(self) -> SinkStats:
        """Counters for /metrics and /health."""
        ...

    @property
    def queue_depth(self) -> int:
        """Records waiting to be journaled."""
        ...

    def spooled_files(self) -> int:
        """Spooled batches waiting for the database."""
        ...

    def start(self) -> None:
        """Start the background work."""
        ...

    def submit(self, record: CallRecord) -> None:
        """Queue a record; never blocks on the database."""
        ...

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything submitted is written; True if it got there."""
        ...

    def stop(self, timeout: float = 30.0) -> None:
        """Write what is queued and stop."""
        ...
