"""ModelBackends: the backends that serve each model, and the routing over them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from gateway.config import BackendConfig, GatewayConfig, ModelConfig
from gateway.routing.prefix_affinity import PrefixAffinity
from gateway.routing_config import RoutingPolicy

LEAST_IN_FLIGHT = "least_in_flight"
# Another backend after the first failed: the least busy of the rest, whatever the policy.
RETRY = "retry"


@dataclass(slots=True)
class Backend:
    """One upstream server and what the gateway knows about it right now."""

    model: str
    url: str
    api_key: str | None = None
    # The vLLM runner the model's config says it serves, and whether the backend was asked.
    runner: str = "generate"
    runner_checked: bool = False
    in_flight: int = 0
    healthy: bool = True
    last_error: str | None = None
    system_fingerprint: str | None = None
    consecutive_timeouts: int = 0
    engine_gauges: dict[str, float] = field(default_factory=dict)
    served_models: dict[str, dict[str, object]] = field(default_factory=dict)


class ModelBackends:
    """The backends of every model, chosen by the model's routing policy."""

    def __init__(self, config: GatewayConfig) -> None:
        self._by_model: dict[str, list[Backend]] = {
            model.name: [self._backend(model, b) for b in model.backends] for model in config.models
        }
        self._affinity: dict[str, PrefixAffinity[Backend]] = {
            model.name: PrefixAffinity(model.prefix_affinity)
            for model in config.models
            if model.routing is RoutingPolicy.PREFIX_AFFINITY and len(model.backends) > 1
        }
        # Routing decisions by (model, reason), exported as plumbline_routing_decisions_total.
        self.decisions: Counter[tuple[str, str]] = Counter()

    @staticmethod
    def _backend(model: ModelConfig, config: BackendConfig) -> Backend:
        return Backend(
            model=model.name, url=config.url, api_key=config.api_key, runner=model.runner
        )

    def serving(self, model: str) -> list[Backend]:
        """Every backend that serves a model."""
        return self._by_model.get(model, [])

    def all(self) -> list[Backend]:
        """Every backend of every model."""
        return [b for backends in self._by_model.values() for b in backends]

    def pick(self, model: str, exclude: tuple[Backend, ...] = ()) -> Backend | None:
        """The healthy backend with the fewest calls in flight, or None."""
        best: Backend | None = None
        for backend in self._by_model.get(model, ()):
            if not backend.healthy or backend in exclude:
                continue
            if best is None or backend.in_flight < best.in_flight:
                best = backend
        return best

    def route(
        self, model: str, prefix: Sequence[bytes] = (), exclude: tuple[Backend, ...] = ()
    ) -> Backend | None:
        """The backend a call goes to by the model's policy (None: no healthy one), counted.

        `prefix` is the call's prompt prefix as block hashes (`prefix_blocks`); without one, or
        on a retry, the call goes to the least busy healthy backend.
        """
        affinity = self._affinity.get(model)
        if affinity is None or not prefix or exclude:
            chosen = self.pick(model, exclude)
            reason = RETRY if exclude else LEAST_IN_FLIGHT
        else:
            healthy = [b for b in self._by_model.get(model, ()) if b.healthy]
            if not healthy:
                return None
            chosen, reason = affinity.choose(healthy, prefix)
        if chosen is not None:
            self.decisions[(model, reason)] += 1
        return chosen

    def uses_prefix(self, model: str) -> bool:
        """Whether the model's calls are routed by their prompt prefix."""
        return model in self._affinity

    def mark_failed(self, backend: Backend, reason: str) -> None:
        """Take a backend out of rotation until its next health check passes."""
        backend.healthy = False
        backend.last_error = reason
