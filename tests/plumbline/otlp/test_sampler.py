"""The OTEL_TRACES_SAMPLER settings and the decisions they make."""

from __future__ import annotations

import pytest

from plumbline.otlp.sampler import TraceSampler, sampler_from_env

# The ratio sampler reads the trace id's last 14 hex digits (56 bits) as its randomness.
LOW = "ffffffffffffffffff00000000000001"  # randomness ~0: sampled only at ratio 1
HIGH = "000000000000000000ffffffffffffff"  # randomness ~1: sampled at any ratio above 0
MIDDLE = "0000000000000000008" + "0" * 13  # randomness exactly 1/2


def test_the_default_is_parentbased_always_on() -> None:
    sampler = sampler_from_env({})
    assert sampler == TraceSampler("parentbased_always_on")
    assert sampler.sampled(LOW, None) is True
    assert sampler.sampled(LOW, False) is False
    assert sampler.sampled(LOW, True) is True


@pytest.mark.parametrize(
    "env",
    [
        {"OTEL_SDK_DISABLED": "true"},
        {"OTEL_SDK_DISABLED": "TRUE"},
        {"OTEL_TRACES_EXPORTER": "none"},
        {"OTEL_TRACES_EXPORTER": "otlp, none"},
    ],
)
def test_tracing_is_off_by_the_standard_variables(env: dict[str, str]) -> None:
    assert sampler_from_env(env) is None


def test_other_values_leave_tracing_on() -> None:
    assert sampler_from_env({"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"})


def test_always_on_and_off_ignore_the_parent() -> None:
    on = sampler_from_env({"OTEL_TRACES_SAMPLER": "always_on"})
    off = sampler_from_env({"OTEL_TRACES_SAMPLER": "always_off"})
    assert on is not None and off is not None
    assert on.sampled(LOW, False) is True and off.sampled(LOW, True) is False


def test_parentbased_always_off_follows_a_sampled_parent_only() -> None:
    sampler = sampler_from_env({"OTEL_TRACES_SAMPLER": "parentbased_always_off"})
    assert sampler is not None
    assert sampler.sampled(HIGH, None) is False
    assert sampler.sampled(HIGH, True) is True


def test_traceidratio_decides_from_the_trace_id() -> None:
    env = {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"}
    sampler = sampler_from_env(env)
    assert sampler == TraceSampler("traceidratio", 0.5)
    assert sampler.sampled(HIGH, None) is True
    assert sampler.sampled(LOW, None) is False
    assert sampler.sampled(MIDDLE, None) is True  # the threshold itself is sampled
    # Not parent-based: the client's flag does not decide.
    assert sampler.sampled(LOW, True) is False


def test_parentbased_traceidratio_always_keeps_a_sampled_client_trace() -> None:
    env = {"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.01"}
    sampler = sampler_from_env(env)
    assert sampler is not None
    assert sampler.sampled(LOW, True) is True
    assert sampler.sampled(HIGH, False) is False
    assert sampler.sampled(HIGH, None) is True
    assert sampler.sampled(LOW, None) is False


def test_ratio_zero_and_one_are_never_and_always() -> None:
    never = TraceSampler("traceidratio", 0.0)
    always = TraceSampler("traceidratio", 1.0)
    assert never.sampled("f" * 32, None) is False
    assert always.sampled("0" * 31 + "1", None) is True


@pytest.mark.parametrize("arg", ["", "abc", "-0.1", "1.5", "nan"])
def test_an_invalid_ratio_is_one(arg: str) -> None:
    env = {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": arg}
    assert sampler_from_env(env) == TraceSampler("traceidratio", 1.0)


def test_an_unknown_sampler_is_the_default() -> None:
    assert sampler_from_env({"OTEL_TRACES_SAMPLER": "jaeger_remote"}) == TraceSampler()
    assert sampler_from_env({"OTEL_TRACES_SAMPLER": "ALWAYS_OFF"}) == TraceSampler("always_off")
