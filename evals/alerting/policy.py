"""Alert rules of a suite: interval bounds vs thresholds with hysteresis, and a regression test.

Defaults and why:
- Fire when the *upper* bound is below the threshold: a few agreeing samples cannot prove 100%
  and sampling noise alone cannot page; only a run whose best case misses the target does.
- Two consecutive breaching runs: the interval covers sampling noise, not a transient serving
  fault (a backend restart, a bad batch of parse failures). Runs of a suite reuse the same frozen
  questions and paraphrases, so a real drop breaches on consecutive runs almost surely; a
  one-off fault rarely does twice. The cost is one schedule period of delay. The Monte Carlo test
  shows the default keeps false alarms <= 1% at 95% and detection >= 95% at 85% agreement.
- Resolve on the *lower* bound back at threshold + 0.02 (hysteresis), so a suite hovering at the
  threshold does not flap. Critical questions resolve on the point estimate: one question's
  Wilson lower bound at 100 samples only clears 0.92 at about 98/100.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evals.alerting.channels import NotifyTarget
from evals.scoring.statistics import Bound

_STRICT = ConfigDict(extra="forbid", frozen=True)


class LevelRule(BaseModel):
    """Fire when a bound stays below a threshold; resolve when one clears a higher level."""

    model_config = _STRICT
    threshold: float = Field(0.90, gt=0, lt=1)
    bound: Bound = Bound.UPPER
    consecutive: int = Field(2, ge=1, le=100)
    recover_level: float | None = Field(None, gt=0, le=1)
    recover_bound: Bound = Bound.LOWER
    recover_consecutive: int = Field(1, ge=1, le=100)

    @property
    def recover_at(self) -> float:
        """The level to clear for resolving: recover_level, else threshold + 0.02."""
        if self.recover_level is not None:
            return self.recover_level
        return min(1.0, round(self.threshold + 0.02, 10))

    @model_validator(mode="after")
    def _hysteresis(self) -> LevelRule:
        # A rule that inherits the suite threshold is checked against it by the suite loader.
        explicit = "threshold" in self.model_fields_set
        if explicit and self.recover_level is not None and self.recover_level < self.threshold:
            raise ValueError(
                f"recover_level {self.recover_level} is below threshold {self.threshold}: "
                "the alert would flap"
            )
        return self


class RegressionRule(BaseModel):
    """Fire on a statistically real drop against the baseline run of at least min_drop."""

    model_config = _STRICT
    enabled: bool = True
    alpha: float = Field(0.01, gt=0, lt=1)
    min_drop: float = Field(0.02, ge=0, lt=1)
    recover_consecutive: int = Field(1, ge=1, le=100)


def _critical_default() -> LevelRule:
    return LevelRule(recover_bound=Bound.POINT)


class AlertPolicy(BaseModel):
    """All alert rules of one suite."""

    model_config = _STRICT
    suite: LevelRule = Field(default_factory=LevelRule)
    critical: LevelRule = Field(default_factory=_critical_default)
    regression: RegressionRule = Field(default_factory=RegressionRule)
    renotify_after_runs: int | None = Field(None, ge=1)
    # Channels for this suite's alerts; empty means the settings' default channels.
    notify: tuple[NotifyTarget, ...] = ()

    @field_validator("critical", mode="before")
    @classmethod
    def _critical_defaults(cls, value: Any) -> Any:
        # A suite that sets only some critical fields keeps the critical default recover bound.
        if isinstance(value, dict) and "recover_bound" not in value:
            return {**value, "recover_bound": Bound.POINT}
        return value
