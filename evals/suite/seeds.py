"""The `seed` of each request under a suite's seed policy."""

from __future__ import annotations

import hashlib

from evals.suite.schema import SamplingParams


def sample_seed(
    sampling: SamplingParams, question_id: str, paraphrase_index: int, sample_index: int
) -> int | None:
    """None (no seed), the fixed seed, or a stable per-sample seed derived from the base seed."""
    if sampling.seed_policy == "none":
        return None
    if sampling.seed_policy == "fixed":
        return sampling.seed
    digest = hashlib.blake2b(
        f"{sampling.seed}:{question_id}:{paraphrase_index}:{sample_index}".encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big") % 2**31
