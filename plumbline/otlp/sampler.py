"""The trace sampler, configured by the standard OTEL_TRACES_SAMPLER environment variables."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

DEFAULT_SAMPLER = "parentbased_always_on"
ROOT_OF = {
    "always_on": "always_on",
    "always_off": "always_off",
    "traceidratio": "traceidratio",
    "parentbased_always_on": "always_on",
    "parentbased_always_off": "always_off",
    "parentbased_traceidratio": "traceidratio",
}
# The OpenTelemetry spec's TraceIdRatioBased: the trace id's least significant 56 bits are
# its randomness, sampled when at least the threshold (1 - ratio) * 2**56.
RANDOMNESS_BITS = 56


@dataclass(frozen=True, slots=True)
class TraceSampler:
    """Decides whether a call's trace is sampled, from its parent's flag or its trace id."""

    name: str = DEFAULT_SAMPLER
    ratio: float = 1.0

    @property
    def parent_based(self) -> bool:
        """Whether a client's sampled flag decides (the parentbased_* samplers)."""
        return self.name.startswith("parentbased_")

    @property
    def threshold(self) -> int:
        """The smallest randomness value sampled by the ratio."""
        return round((1.0 - self.ratio) * (1 << RANDOMNESS_BITS))

    def sampled(self, trace_id: str, parent_sampled: bool | None) -> bool:
        """Whether to sample; `parent_sampled` is None when the call starts its own trace."""
        if parent_sampled is not None and self.parent_based:
            return parent_sampled
        root = ROOT_OF[self.name]
        if root == "always_on":
            return True
        if root == "always_off":
            return False
        return int(trace_id[-RANDOMNESS_BITS // 4 :], 16) >= self.threshold


def sampler_from_env(env: Mapping[str, str]) -> TraceSampler | None:
    """The sampler the environment sets, or None when tracing is off (read once, at start)."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    exporters = {e.strip().lower() for e in env.get("OTEL_TRACES_EXPORTER", "").split(",")}
    if "none" in exporters:
        return None
    name = env.get("OTEL_TRACES_SAMPLER", "").strip().lower() or DEFAULT_SAMPLER
    if name not in ROOT_OF:
        # The spec: an unrecognised value is logged and ignored, as if it were not set.
        log.warning("OTEL_TRACES_SAMPLER=%r is not supported; using %s", name, DEFAULT_SAMPLER)
        name = DEFAULT_SAMPLER
    if ROOT_OF[name] != "traceidratio":
        return TraceSampler(name)
    return TraceSampler(name, _ratio(env.get("OTEL_TRACES_SAMPLER_ARG")))


def _ratio(arg: str | None) -> float:
    """OTEL_TRACES_SAMPLER_ARG as a ratio in [0, 1]; 1.0 when unset or invalid (the spec's)."""
    if arg is None or not arg.strip():
        return 1.0
    try:
        ratio = float(arg)
    except ValueError:
        ratio = -1.0
    if not 0.0 <= ratio <= 1.0:
        log.warning("OTEL_TRACES_SAMPLER_ARG=%r is not a ratio in [0, 1]; using 1.0", arg)
        return 1.0
    return ratio
