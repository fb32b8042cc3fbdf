"""What the first divergent token says about a disagreement, and its one-line explanation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum

from evals.divergence.traces import LogprobsMode

END_OF_TEXT = "<end>"


class DivergenceVerdict(StrEnum):
    """How contested the first divergent token was."""

    NEAR_TIE = "near_tie"
    SPLIT = "split"
    RARE_BRANCH = "rare_branch"


@dataclass(frozen=True, slots=True)
class Branch:
    """One alternative at the divergent position and the answers the samples taking it gave."""

    token: str
    probability: float | None
    answers: tuple[tuple[str | None, int], ...] = ()


@dataclass(frozen=True, slots=True)
class DivergenceReport:
    """The first token where disagreeing samples part ways, with the distribution there."""

    position: int
    prefix: str
    branches: tuple[Branch, ...]
    margin: float
    near_tie: bool
    verdict: DivergenceVerdict
    logprobs_mode: LogprobsMode
    modal_answer: str
    disagreeing_samples: int
    explained_samples: int

    @property
    def unstable(self) -> bool:
        """True when the answer hangs on a contested token (near tie or a real split)."""
        return self.verdict is not DivergenceVerdict.RARE_BRANCH

    @property
    def top_probabilities(self) -> tuple[float, float]:
        """Probabilities of the two most likely alternatives (0 when absent)."""
        probs = [b.probability or 0.0 for b in self.branches] + [0.0, 0.0]
        return probs[0], probs[1]

    def explanation(self, prefix_chars: int = 60) -> str:
        """One line: `first divergence after "X": " 12" p=0.46 vs " 24" p=0.41 (near tie)`."""
        tail = (
            self.prefix
            if len(self.prefix) <= prefix_chars
            else "\u2026" + self.prefix[-prefix_chars:]
        )
        where = f"after {_quoted(tail)}" if self.prefix else "at the first token"
        first, second = (list(self.branches) + [Branch("", 0.0)] * 2)[:2]
        label = self.verdict.value.replace("_", " ")
        return f"first divergence {where}: {_shown(first)} vs {_shown(second)} ({label})"


def _shown(branch: Branch) -> str:
    probability = "p=?" if branch.probability is None else f"p={branch.probability:.2f}"
    return f"{_quoted(branch.token)} {probability}"


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
