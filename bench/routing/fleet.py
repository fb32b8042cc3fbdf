"""Several simulator backends behind one gateway, and one measured phase per routing policy."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.harness.load import Request, Sample, open_loop
from bench.routing.counters import sample_sum
from simulator.process import SimulatorProcess
from tests.support.gateway_process import GatewayProcess, gateway_config

COUNTERS = ("vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total")
SERVED = "vllm:request_success_total"


def simulator_config(args: Any) -> dict[str, Any]:
    """A backend whose prefill costs per uncached token and whose prefix cache is bounded."""
    return {
        "timing": {
            "prefill_ms_per_token": args.prefill_ms,
            "decode_ms_per_token": args.decode_ms,
            "max_num_seqs": args.max_num_seqs,
        },
        "prefix_cache": {"block_size": 16, "num_blocks": args.cache_blocks},
    }


@dataclass(frozen=True, slots=True)
class Phase:
    """One policy's run: the client's samples and what each backend counted meanwhile."""

    policy: str
    samples: list[Sample]
    served: list[float]
    queries: float
    hits: float


def _counts(fleet: Sequence[SimulatorProcess]) -> list[tuple[float, ...]]:
    pages = [sim.metrics_text() for sim in fleet]
    return [tuple(sample_sum(p, name) for name in (SERVED, *COUNTERS)) for p in pages]


def gateway_for(fleet: Sequence[SimulatorProcess], policy: str, args: Any) -> dict[str, Any]:
    """A one-model gateway config over the fleet with `policy`."""
    config = gateway_config(fleet[0].base_url)
    model = config["models"][0]
    model.update(
        backends=[{"url": sim.base_url} for sim in fleet],
        routing=policy,
        prefix_affinity={"load_margin": args.load_margin},
    )
    config["health"] = {"interval_s": 1.0, "timeout_s": 1.0}
    return config


def run_phase(
    fleet: Sequence[SimulatorProcess],
    policy: str,
    calls: list[Request],
    database: str,
    key: str,
    args: Any,
) -> Phase:
    """Empty every prefix cache, then send the calls through a gateway routing by `policy`."""
    for sim in fleet:
        sim.reset()
    gateway = GatewayProcess(gateway_for(fleet, policy, args), database)
    with gateway:
        before = _counts(fleet)
        samples = asyncio.run(
            open_loop(
                f"{gateway.url}/v1/chat/completions",
                calls,
                {"Authorization": f"Bearer {key}"},
                args.rate,
                len(calls) / args.rate,
            )
        )
        after = _counts(fleet)
    deltas = [
        tuple(b - a for a, b in zip(x, y, strict=True)) for x, y in zip(before, after, strict=True)
    ]
    return Phase(
        policy,
        samples,
        [d[0] for d in deltas],
        sum(d[1] for d in deltas),
        sum(d[2] for d in deltas),
    )
