"""The four GenAI histograms: names, units, descriptions and the conventions' bucket boundaries.

From the GenAI semantic conventions' metrics page (the same in v1.36.0 and v1.41.0).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Instrument:
    """A histogram with explicit bucket boundaries."""

    name: str
    unit: str
    description: str
    bounds: tuple[float, ...]


TOKEN_USAGE = Instrument(
    "gen_ai.client.token.usage",
    "{token}",
    "Number of input and output tokens used.",
    (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864),
)
OPERATION_DURATION = Instrument(
    "gen_ai.client.operation.duration",
    "s",
    "GenAI operation duration.",
    (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92),
)
TIME_TO_FIRST_TOKEN = Instrument(
    "gen_ai.server.time_to_first_token",
    "s",
    "Time to generate first token for successful responses.",
    (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0),
)
TIME_PER_OUTPUT_TOKEN = Instrument(
    "gen_ai.server.time_per_output_token",
    "s",
    "Time per output token generated after the first token for successful responses.",
    (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5),
)
INSTRUMENTS = (TOKEN_USAGE, OPERATION_DURATION, TIME_TO_FIRST_TOKEN, TIME_PER_OUTPUT_TOKEN)
