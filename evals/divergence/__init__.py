"""First divergent token: where samples with different answers part ways, read from logprobs."""

from evals.divergence.first_divergence import first_divergence
from evals.divergence.report import END_OF_TEXT, Branch, DivergenceReport, DivergenceVerdict
from evals.divergence.traces import (
    LogprobsMode,
    SampleTrace,
    TokenStep,
    TopLogprob,
    common_prefix_length,
)

__all__ = [
    "END_OF_TEXT",
    "Branch",
    "DivergenceReport",
    "DivergenceVerdict",
    "LogprobsMode",
    "SampleTrace",
    "TokenStep",
    "TopLogprob",
    "common_prefix_length",
    "first_divergence",
]
