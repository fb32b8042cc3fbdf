"""What the gateway and its recorder process send each other over their socket."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.metering.record import CallRecord
from gateway.recording.observation import CallObservation
from gateway.recording.spool_adoption import OrphanSpools


@dataclass(frozen=True, slots=True)
class Hello:
    """The first message: where to write and how to batch."""

    database_url: str
    pool_size: int
    config_json: str
    log_level: int
    # Spools of no live recorder that this one adopts; None: only its own.
    orphans: OrphanSpools | None = None


@dataclass(frozen=True, slots=True)
class RecordBatch:
    """Raw records, in the order the gateway finished them."""

    records: list[CallRecord]


@dataclass(frozen=True, slots=True)
class Flush:
    """Write everything received so far, then answer with a report saying whether it worked."""

    timeout_s: float


@dataclass(frozen=True, slots=True)
class Report:
    """The recorder's counters and the calls it recorded since its last report."""

    stats: dict[str, Any]
    queue_depth: int
    spooled_files: int
    observations: list[CallObservation]
    # Set on the report that answers a flush request: whether everything got written.
    flushed: bool | None = None
    # The last report before the recorder exits.
    final: bool = False
