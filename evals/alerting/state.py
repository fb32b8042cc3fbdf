"""Alert state carried from run to run, one entry per rule key, serialisable to JSON."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

SUITE_KEY = "suite"
REGRESSION_KEY = "regression"
QUESTION_PREFIX = "question:"


def question_key(question_id: str) -> str:
    """The alert key of a critical question."""
    return f"{QUESTION_PREFIX}{question_id}"


class AlertStatus(StrEnum):
    """Where one alert stands."""

    OK = "ok"
    PENDING = "pending"
    FIRING = "firing"
    ACKNOWLEDGED = "acknowledged"

    @property
    def active(self) -> bool:
        """Firing, acknowledged or not."""
        return self in (AlertStatus.FIRING, AlertStatus.ACKNOWLEDGED)


@dataclass(frozen=True, slots=True)
class RuleState:
    """One alert's counters: consecutive breaches or recoveries, and who acknowledged it."""

    status: AlertStatus = AlertStatus.OK
    breaches: int = 0
    recoveries: int = 0
    fired_run_id: str | None = None
    runs_since_notified: int = 0
    acknowledged_by: str | None = None
    baseline_run_id: str | None = None


@dataclass(frozen=True, slots=True)
class AlertState:
    """Every alert of a suite after its latest run."""

    rules: Mapping[str, RuleState] = field(default_factory=dict)
    last_run_id: str | None = None

    def rule(self, key: str) -> RuleState:
        """The state of one alert (OK when never seen)."""
        return self.rules.get(key, RuleState())

    def with_rule(self, key: str, rule: RuleState) -> AlertState:
        """A copy with one alert replaced."""
        return replace(self, rules={**self.rules, key: rule})

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (for a database column)."""
        return {
            "last_run_id": self.last_run_id,
            "rules": {
                key: {**asdict(rule), "status": rule.status.value}
                for key, rule in self.rules.items()
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AlertState:
        """Rebuild from `to_dict` output."""
        rules = {
            key: RuleState(**{**value, "status": AlertStatus(value["status"])})
            for key, value in (data.get("rules") or {}).items()
        }
        return cls(rules=rules, last_run_id=data.get("last_run_id"))
