"""Which CPUs the vLLM server gets and which everything else gets, so the two do not compete."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class CorePlan:
    """The CPUs vLLM is pinned to and those the rest runs on; both empty when nothing is pinned."""

    vllm: frozenset[int]
    rest: frozenset[int]

    @property
    def pinned(self) -> bool:
        """True when vLLM and the rest run on separate CPUs."""
        return bool(self.vllm and self.rest)

    @property
    def vllm_bind(self) -> str:
        """vLLM's VLLM_CPU_OMP_THREADS_BIND value for its CPUs (`0`, or `0,2`)."""
        return ",".join(str(cpu) for cpu in sorted(self.vllm))

    def describe(self) -> str:
        """A sentence for the report."""
        if not self.pinned:
            return "not pinned (fewer than 2 CPUs available): vLLM shares every CPU"
        vllm = ", ".join(map(str, sorted(self.vllm)))
        rest = ", ".join(map(str, sorted(self.rest)))
        return (
            f"vLLM (API server, engine core and its OpenMP threads) pinned to CPU {vllm}; "
            f"the benchmark client, nginx, the gateway and its recorder to CPU {rest} "
            "(Postgres, which this benchmark does not start, is not pinned)"
        )


def plan_cores(enabled: bool = True) -> CorePlan:
    """One CPU for vLLM and the others for the rest, from the CPUs this process may use."""
    allowed = sorted(os.sched_getaffinity(0))
    if not enabled or len(allowed) < 2:
        return CorePlan(frozenset(), frozenset())
    return CorePlan(frozenset(allowed[:1]), frozenset(allowed[1:]))


def pin_self(plan: CorePlan) -> None:
    """Keep this process (and every child it starts from now on) off vLLM's CPU."""
    if plan.pinned:
        os.sched_setaffinity(0, plan.rest)


def allowed_cpus(pid: int) -> frozenset[int]:
    """The CPUs a process (its main thread) may run on."""
    return frozenset(os.sched_getaffinity(pid))
