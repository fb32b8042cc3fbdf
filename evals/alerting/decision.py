"""What an alert evaluation decided, per alert, with reasons."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from evals.alerting.state import AlertState, AlertStatus


class Action(StrEnum):
    """What happened to one alert on this run."""

    FIRE = "fire"
    STAY_FIRING = "stay_firing"
    RESOLVE = "resolve"
    NOTHING = "nothing"


@dataclass(frozen=True, slots=True)
class AlertDecision:
    """One alert's action; `notify` says whether a message goes out."""

    key: str
    action: Action
    notify: bool
    status: AlertStatus
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AlertEvaluation:
    """The new state and every alert's decision for one run."""

    state: AlertState
    decisions: tuple[AlertDecision, ...]

    @property
    def notifications(self) -> tuple[AlertDecision, ...]:
        """The decisions that send a message (fire, resolve, re-notify)."""
        return tuple(d for d in self.decisions if d.notify)

    def decision(self, key: str) -> AlertDecision | None:
        """The decision for one alert key, if it was evaluated."""
        return next((d for d in self.decisions if d.key == key), None)
