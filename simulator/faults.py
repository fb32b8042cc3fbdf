"""Per-request fault plans, drawn from the configured rates or forced by an X-Sim-Fault header.

Header grammar: faults separated by `,`, each `kind` followed by `; key=value` options, e.g.
`X-Sim-Fault: error; status=429` or `stall_mid_stream; after_tokens=3; seconds=1.5`.
Kinds: error (status, after_tokens), stall_first_byte (seconds), stall_mid_stream
(after_tokens, seconds), close_mid_stream (after_tokens), garbage (after_tokens; absent means
the whole body), engine_dead.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pydantic import ValidationError

from simulator.config import (
    CloseFault,
    ErrorFault,
    FaultConfig,
    GarbageFault,
    MidStreamStallFault,
    StallFault,
)
from simulator.errors import ApiError

FAULT_HEADER = "x-sim-fault"
GARBAGE = b'\x00\xff\xfe<html><body>502 Bad Gateway</body></html>\r\n{"id": "chatcmpl-\xc3('


@dataclass(slots=True)
class FaultPlan:
    """The faults one request will suffer."""

    error_status: int | None = None
    error_after_tokens: int | None = None
    stall_first_byte_s: float = 0.0
    stall_after_tokens: int | None = None
    stall_seconds: float = 0.0
    close_after_tokens: int | None = None
    garbage_body: bool = False
    garbage_after_tokens: int | None = None
    engine_dead: bool = False

    @property
    def any(self) -> bool:
        """Whether anything at all will go wrong."""
        return self != FaultPlan()


def _apply(plan: FaultPlan, fault: object) -> None:
    if isinstance(fault, ErrorFault):
        plan.error_status, plan.error_after_tokens = fault.status, fault.after_tokens
    elif isinstance(fault, StallFault):
        plan.stall_first_byte_s = fault.seconds
    elif isinstance(fault, MidStreamStallFault):
        plan.stall_after_tokens, plan.stall_seconds = fault.after_tokens, fault.seconds
    elif isinstance(fault, CloseFault):
        plan.close_after_tokens = fault.after_tokens
    elif isinstance(fault, GarbageFault):
        plan.garbage_body = fault.after_tokens is None
        plan.garbage_after_tokens = fault.after_tokens


def draw_faults(config: FaultConfig, rng: random.Random) -> FaultPlan:
    """Faults drawn independently at their configured rates."""
    plan = FaultPlan(engine_dead=config.engine_dead)
    for fault in (
        config.error,
        config.stall_first_byte,
        config.stall_mid_stream,
        config.close_mid_stream,
        config.garbage,
    ):
        if fault.rate > 0 and rng.random() < fault.rate:
            _apply(plan, fault)
    return plan


_FaultModel = type[ErrorFault | StallFault | MidStreamStallFault | CloseFault | GarbageFault]
_KINDS: Mapping[str, _FaultModel] = MappingProxyType(
    {
        "error": ErrorFault,
        "stall_first_byte": StallFault,
        "stall_mid_stream": MidStreamStallFault,
        "close_mid_stream": CloseFault,
        "garbage": GarbageFault,
    }
)


def parse_fault_header(value: str) -> FaultPlan:
    """The plan an X-Sim-Fault header forces; a malformed header is a 400."""
    plan = FaultPlan()
    for spec in value.split(","):
        parts = [p.strip() for p in spec.split(";") if p.strip()]
        if not parts:
            continue
        kind, options = parts[0], {}
        for option in parts[1:]:
            key, sep, raw = option.partition("=")
            if not sep:
                raise ApiError(f"X-Sim-Fault option {option!r} is not key=value.", param=kind)
            options[key.strip()] = raw.strip()
        if kind == "engine_dead":
            plan.engine_dead = True
            continue
        model = _KINDS.get(kind)
        if model is None:
            known = ", ".join([*_KINDS, "engine_dead"])
            raise ApiError(f"Unknown X-Sim-Fault kind {kind!r}; known: {known}.", param=kind)
        try:
            _apply(plan, model.model_validate({"rate": 1.0, **options}))
        except ValidationError as exc:
            message = f"Bad X-Sim-Fault {kind!r}: {exc.errors()[0]['msg']}"
            raise ApiError(message, param=kind) from None
    return plan
