"""LiveSampler: the hot-path choice of which production calls get resampled for stability.

A dict lookup and one random draw per call; the request and response bytes the call already
has are kept on its record, and the log sink's writer thread turns them into a pending
`live_samples` row. Celery is never touched here.
"""

from __future__ import annotations

import random
from typing import Any

from gateway.config import FeatureSampling, LiveSamplingConfig, ModelConfig
from gateway.metering.record import LiveSampleOrder

HIGH_STAKES = "high"


class LiveSampler:
    """Picks calls per feature at the configured rate (or only the high-stakes ones)."""

    def __init__(self, config: LiveSamplingConfig, rng: random.Random | None = None) -> None:
        self.config = config
        self._rng = rng or random.Random()
        self._answers = {name: _answer(rule) for name, rule in config.features.items()}
        self._default_answer = _answer(config.default) if config.default else None
        # Checked first on every call, so a gateway without sampling pays one attribute read.
        self.active = bool(config.features or config.default)

    @property
    def features(self) -> frozenset[str]:
        """Features with a rule of their own."""
        return frozenset(self.config.features)

    def pick(
        self, feature: str | None, source: str, stakes: str | None, model: ModelConfig
    ) -> LiveSampleOrder | None:
        """The resample order for this call, or None (most calls)."""
        if source != "product":
            return None  # never resample evals or resamples
        rule: FeatureSampling | None = None
        if feature is not None:
            rule = self.config.features.get(feature)
        if rule is None:
            rule = self.config.default
        if rule is None or rule.rate <= 0:
            return None
        if rule.high_stakes_only and stakes != HIGH_STAKES:
            return None
        if rule.rate < 1 and self._rng.random() >= rule.rate:
            return None
        answer = self._answers[feature] if feature in self._answers else self._default_answer
        return LiveSampleOrder(answer, self.config.resamples, model.priority_scheduling)


def _answer(rule: FeatureSampling) -> dict[str, Any] | None:
    return rule.answer.model_dump(mode="json") if rule.answer else None
