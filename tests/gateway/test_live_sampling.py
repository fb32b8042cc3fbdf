"""Which calls are picked for live resampling: per feature rate, high-stakes only, never evals."""

from __future__ import annotations

import random

import pytest

from gateway.config import LiveSamplingConfig, ModelConfig
from gateway.live_sampling import LiveSampler

MODEL = ModelConfig(name="tiny", backends=[{"url": "http://x"}])  # type: ignore[list-item]
PRIORITY = ModelConfig(
    name="big",
    backends=[{"url": "http://x"}],  # type: ignore[list-item]
    priority_scheduling=True,
)
CONFIG = LiveSamplingConfig.model_validate(
    {
        "resamples": 4,
        "features": {
            "always": {"rate": 1.0, "answer": {"type": "number"}},
            "never": {"rate": 0.0},
            "some": {"rate": 0.05},
            "stakes": {"rate": 1.0, "high_stakes_only": True},
        },
        "default": {"rate": 1.0},
    }
)


def sampler() -> LiveSampler:
    return LiveSampler(CONFIG, random.Random(7))


def test_rates_and_rules_per_feature() -> None:
    picker = sampler()
    order = picker.pick("always", "product", None, MODEL)
    assert order is not None and order.answer is not None
    assert order.answer["type"] == "number"
    assert (order.resamples, order.priority) == (4, False)
    assert picker.pick("never", "product", None, MODEL) is None
    assert picker.pick("stakes", "product", None, MODEL) is None
    assert picker.pick("stakes", "product", "high", MODEL) is not None
    unlisted = picker.pick("other", "product", None, PRIORITY)
    assert unlisted is not None and unlisted.answer is None and unlisted.priority
    assert picker.pick(None, "product", None, MODEL) is not None  # the default rule


@pytest.mark.parametrize("source", ["eval", "live_sample"])
def test_eval_and_resample_calls_are_never_sampled(source: str) -> None:
    assert sampler().pick("always", source, None, MODEL) is None


def test_a_fractional_rate_samples_about_that_share() -> None:
    picker = sampler()
    picked = sum(picker.pick("some", "product", None, MODEL) is not None for _ in range(20_000))
    # Binomial(20000, 0.05): mean 1000, sd about 31; seeded, so this is one fixed outcome.
    assert 850 < picked < 1150


def test_no_rules_means_the_sampler_is_inactive() -> None:
    assert not LiveSampler(LiveSamplingConfig()).active
    assert sampler().active and sampler().features == {"always", "never", "some", "stakes"}
