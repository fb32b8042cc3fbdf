"""Token traces of sampled completions as a backend reported them (token, logprob, top-k)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

LogprobsMode = Literal["raw_logprobs", "processed_logprobs"]


@dataclass(frozen=True, slots=True)
class TopLogprob:
    """One alternative at a position: a token and its log-probability."""

    token: str
    logprob: float


@dataclass(frozen=True, slots=True)
class TokenStep:
    """One generated token, its logprob and the top-k alternatives reported at that position."""

    token: str
    logprob: float
    top_logprobs: tuple[TopLogprob, ...] = ()


@dataclass(frozen=True, slots=True)
class SampleTrace:
    """One sample of a question: its answer key (None = parse failure) and its tokens if logged."""

    answer_key: str | None
    steps: tuple[TokenStep, ...] | None
    sample_id: str = ""

    @classmethod
    def from_chat_logprobs(
        cls,
        content: Sequence[Mapping[str, Any]] | None,
        answer_key: str | None,
        sample_id: str = "",
    ) -> SampleTrace:
        """Build from an OpenAI chat `choices[].logprobs.content` list (None when not logged)."""
        if content is None:
            return cls(answer_key, None, sample_id)
        steps = tuple(
            TokenStep(
                token=str(item["token"]),
                logprob=float(item["logprob"]),
                top_logprobs=tuple(
                    TopLogprob(str(top["token"]), float(top["logprob"]))
                    for top in item.get("top_logprobs") or ()
                ),
            )
            for item in content
        )
        return cls(answer_key, steps, sample_id)

    @property
    def tokens(self) -> tuple[str, ...]:
        """The sampled tokens (empty without logprobs)."""
        return tuple(step.token for step in self.steps or ())


def common_prefix_length(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading tokens two sequences share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
