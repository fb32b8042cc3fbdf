"""What Plumbline may add to a stream against nginx with the same logprobs, and the verdicts."""

from __future__ import annotations

from bench.harness.verdict import Verdict, at_most

# The figure, its percentile ("mean" too) and the bound on (Plumbline - nginx) in ms. Per-token
# figures (ITL, TPOT) get the tight bounds; once-per-call ones (TTFT, end-to-end) 1 ms.
TARGETS = (
    ("itl", "p50", 0.1),
    ("itl", "p90", 0.3),
    ("tpot", "p50", 0.1),
    ("tpot", "p90", 0.3),
    ("ttft", "p50", 1.0),
    ("ttft", "p90", 1.0),
    ("e2el", "p50", 1.0),
    ("e2el", "p90", 1.0),
)
NAMES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2E"}


def verdicts(added: dict[tuple[str, str], float]) -> list[Verdict]:
    """One verdict per target from the added figures keyed by (metric, stat)."""
    found = []
    for metric, stat, bound in TARGETS:
        value = added.get((metric, stat), float("nan"))
        found.append(
            Verdict(
                f"{NAMES[metric]} {stat} added over nginx with logprobs ≤ {bound:g} ms",
                f"{value:+.3f} ms",
                at_most(value, bound),
            )
        )
    return found
