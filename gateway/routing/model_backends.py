"""ModelBackends: the backends that serve each model, and least-in-flight routing over them."""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.config import BackendConfig, GatewayConfig, ModelConfig


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
    """The backends of every model, chosen by fewest calls in flight."""

    def __init__(self, config: GatewayConfig) -> None:
        self._by_model: dict[str, list[Backend]] = {
            model.name: [self._backend(model, b) for b in model.backends] for model in config.models
        }

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

    def mark_failed(self, backend: Backend, reason: str) -> None:
        """Take a backend out of rotation until its next health check passes."""
        backend.healthy = False
        backend.last_error = reason
