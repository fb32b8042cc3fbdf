"""The parts of a call's record besides the request's parameters and the response's meter.

Each is immutable and made by one owner: the endpoint makes the arrival, the attribution,
the plan's part, the kept bodies and the outcome (replacing one as the call learns more: the
key's team, a failure); the forwarder makes the delivery. `call_record.assemble_record` puts
them together once the call has ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gateway.auth.keys import KeyInfo
from gateway.config import ModelConfig
from gateway.metering.metered import Failure
from gateway.metering.record import LiveSampleOrder
from gateway.proxy.call_kinds.base import CallKind
from gateway.proxy.request_plan import MeasurementPlan
from gateway.tracing.call_trace import CallTrace


@dataclass(frozen=True, slots=True)
class Arrival:
    """What the call was on arrival: its ids, route, clock time, client-set labels, trace."""

    id: str
    created_at: datetime
    request_id: str
    endpoint: str
    t_arrival: float
    feature: str | None
    end_user: str | None
    trace: CallTrace


@dataclass(frozen=True, slots=True)
class Attribution:
    """Who pays for the call and where it counts: key, team, retention and source."""

    source: str
    retention_days: int
    key_id: int | None = None
    team_id: int | None = None
    team_name: str | None = None

    def to_team(self, info: KeyInfo) -> Attribution:
        """Attributed to the team `info` names (the key's own, or the team it acts for)."""
        return Attribution(
            self.source, info.retention_days, info.key_id, info.team_id, info.team_name
        )


@dataclass(frozen=True, slots=True)
class Kept:
    """Which of the call's bodies its record keeps: the team's choice, or a live sample's."""

    store_body: bool = False
    request_body: bytes | None = None
    live_sample: LiveSampleOrder | None = None

    @property
    def keeps_reply(self) -> bool:
        """Whether the reply the client got is kept too."""
        return self.store_body or self.live_sample is not None


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the call ended, at what time, as far as the gateway saw it."""

    t_done: float
    failure: Failure | None = None
    cancelled: bool = False
    # Why load shedding refused the call, if it did.
    shed: str | None = None


@dataclass(frozen=True, slots=True)
class Planned:
    """The call's kind, its model's configuration and the measurement planned for it."""

    kind: CallKind
    model: ModelConfig
    plan: MeasurementPlan


@dataclass(frozen=True, slots=True)
class Delivery:
    """Where the call was sent, the reply the client got (if kept), the gateway's own time."""

    backend: str | None
    response_body: bytes | None
    overhead_s: float
