"""Load shedding: when a model's backends are saturated, refuse calls in a stated order.

First eval and live-resample calls (from `background_at` of the thresholds), then product calls
of teams above their fair share (at the thresholds); product calls of a team within its share
are never shed. Every admitted call of a priority-scheduled model gets its vLLM `priority` here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gateway.config import ModelConfig
from gateway.errors import GatewayError
from gateway.governance.fair_share import ShareCheck, TeamLoad
from gateway.routing.model_backends import Backend, ModelBackends
from gateway.shedding_config import SheddingConfig

# Shed reasons, as calls record them and plumbline_shed_total labels them.
EVAL = "eval"
LIVE_SAMPLE = "live_sample"
OVER_FAIR_SHARE = "over_fair_share"
BACKGROUND = {"eval": EVAL, "live_sample": LIVE_SAMPLE}
_BACKGROUND_NAMES = {EVAL: "eval", LIVE_SAMPLE: "live-resample"}


class CallShed(GatewayError):
    """A 503 in OpenAI's shape: the model is overloaded and this call was shed; retry later."""

    def __init__(self, reason: str, message: str, retry_after_s: int) -> None:
        super().__init__(503, message)
        self.reason = reason
        self.headers = (
            (b"retry-after", str(retry_after_s).encode()),
            (b"x-plumbline-shed", reason.encode()),
        )


def backend_pressure(backend: Backend, config: SheddingConfig) -> float:
    """How near the backend is to saturation: 1.0 at the first threshold it reaches.

    The queue is the scraped `waiting`, or, if more, this process's calls in flight beyond the
    engine's scraped `running`: calls sent since the last scrape count at once.
    """
    gauges = backend.engine_gauges
    parts = [0.0]
    if config.queue_depth is not None:
        queued = max(gauges.get("waiting", 0.0), backend.in_flight - gauges.get("running", 0.0))
        parts.append(queued / config.queue_depth)
    if config.kv_cache_usage is not None:
        parts.append(gauges.get("kv_cache_usage", 0.0) / config.kv_cache_usage)
    if config.in_flight is not None:
        parts.append(backend.in_flight / config.in_flight)
    return max(parts)


def model_pressure(backends: Iterable[Backend], config: SheddingConfig) -> float:
    """The least pressure among the healthy backends (a call goes to one with room)."""
    return min((backend_pressure(b, config) for b in backends if b.healthy), default=0.0)


@dataclass(slots=True)
class Admission:
    """One call's pass through shedding: its refusal, or its place in the team's count."""

    model: ModelConfig
    source: str
    team: int | None = None
    load: TeamLoad | None = None
    weight: float = 1.0
    over_share: bool = False
    refusal: CallShed | None = None
    entered: bool = False

    @property
    def shed(self) -> str | None:
        """Why the call was shed, or None."""
        return self.refusal.reason if self.refusal is not None else None

    def enter(self) -> None:
        """Count the call in flight for its team, or raise its refusal (a 503)."""
        if self.refusal is not None:
            raise self.refusal
        if self.load is not None:
            self.load.enter(self.team, self.weight)
        self.entered = True

    def leave(self) -> None:
        """The call ended: it no longer counts (idempotent)."""
        if self.entered and self.load is not None:
            self.load.leave(self.team)
        self.entered = False

    def prioritise(self, payload: dict[str, Any]) -> bool:
        """Set vLLM's `priority` (replacing the client's) where the model schedules by it."""
        model = self.model
        if model.provider != "vllm" or not model.priority_scheduling:
            return False
        priority = model.priorities.of(self.source)
        if self.over_share:
            priority += model.priorities.over_share
        payload["priority"] = priority
        return True


class LoadShedder:
    """Decides, per call, whether a saturated model sheds it; counts each decision.

    Its counts of calls in flight are this process's own (see `TeamLoad`).
    """

    def __init__(self, backends: ModelBackends) -> None:
        self.backends = backends
        self._loads: dict[str, TeamLoad] = {}
        # Shed calls by (model, reason), exported as plumbline_shed_total.
        self.shed_counts: Counter[tuple[str, str]] = Counter()

    def pressure(self, model: ModelConfig) -> float:
        """The model's pressure now (0 without shedding configured)."""
        config = model.shedding
        if config is None:
            return 0.0
        return model_pressure(self.backends.serving(model.name), config)

    def admit(
        self, model: ModelConfig, source: str, team_id: int | None, team_name: str | None
    ) -> Admission:
        """The call's admission; `enter` it before forwarding (it raises if the call is shed)."""
        config = model.shedding
        if config is None:
            return Admission(model, source)
        reason = BACKGROUND.get(source)
        if reason is not None:
            if self.pressure(model) < config.background_at:
                return Admission(model, source)
            text = (
                f"The model `{model.name}` is overloaded: {_BACKGROUND_NAMES[reason]} calls are "
                "shed first so product traffic keeps being served. Retry after "
                f"{config.retry_after_s} s."
            )
            return self._shed(model, source, reason, text)
        load = self._loads.get(model.name)
        if load is None:
            load = self._loads[model.name] = TeamLoad()
        weight = config.team_weights.get(team_name or "", 1.0)
        share = load.check(team_id, weight)
        admission = Admission(model, source, team_id, load, weight, share.over)
        # Most calls are within their share: the backends' pressure is read only for the rest.
        if share.over and self.pressure(model) >= 1.0:
            text = _over_share_text(model.name, team_name, share, config)
            return self._shed(model, source, OVER_FAIR_SHARE, text)
        return admission

    def _shed(self, model: ModelConfig, source: str, reason: str, text: str) -> Admission:
        self.shed_counts[(model.name, reason)] += 1
        assert model.shedding is not None
        refusal = CallShed(reason, text, model.shedding.retry_after_s)
        return Admission(model, source, refusal=refusal)

    def team_calls(self, model: str) -> int:
        """Product calls of `model` in flight through this process."""
        load = self._loads.get(model)
        return load.total if load is not None else 0


def _over_share_text(
    model: str, team: str | None, share: ShareCheck, config: SheddingConfig
) -> str:
    return (
        f"The model `{model}` is overloaded and your team `{team}` is above its fair share "
        f"of it: this call would make {share.team_calls} of the {share.total_calls} product "
        f"calls in flight through this gateway process yours, over your share of "
        f"{share.share:.1f}. Retry after {config.retry_after_s} s, or send fewer calls at once."
    )
