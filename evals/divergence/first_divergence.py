"""Find the first token where samples with different answers part ways, and read its logprobs."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from evals.divergence.report import END_OF_TEXT, Branch, DivergenceReport, DivergenceVerdict
from evals.divergence.traces import LogprobsMode, SampleTrace, common_prefix_length


def first_divergence(
    traces: Sequence[SampleTrace],
    *,
    logprobs_mode: LogprobsMode = "raw_logprobs",
    near_tie_margin: float = 0.1,
    split_probability: float = 0.2,
) -> DivergenceReport | None:
    """The first divergent token of one question's samples, or None (all agree / no logprobs).

    Each sample whose answer differs from the modal answer is aligned with the modal-answer
    sample sharing its longest token prefix; the split point shared by most such samples is
    reported with the top-k distribution there (probabilities are exp(logprob) in the given mode).
    """
    keyed = Counter(t.answer_key for t in traces if t.answer_key is not None)
    if not keyed:
        return None
    modal = keyed.most_common(1)[0][0]
    modal_traces = [t for t in traces if t.answer_key == modal and t.steps]
    others = [t for t in traces if t.answer_key != modal]
    logged = [t for t in others if t.steps]
    if not others or not modal_traces or not logged:
        return None
    splits: dict[tuple[str, ...], int] = defaultdict(int)
    for other in logged:
        length = max(common_prefix_length(m.tokens, other.tokens) for m in modal_traces)
        splits[other.tokens[:length]] += 1
    prefix = min(splits, key=lambda p: (-splits[p], len(p)))
    position = len(prefix)
    sharing = [t for t in traces if t.steps and t.tokens[:position] == prefix]
    branches = _branches(sharing, position)
    first, second = ([b.probability or 0.0 for b in branches] + [0.0, 0.0])[:2]
    margin = first - second
    if margin < near_tie_margin:
        verdict = DivergenceVerdict.NEAR_TIE
    elif second >= split_probability:
        verdict = DivergenceVerdict.SPLIT
    else:
        verdict = DivergenceVerdict.RARE_BRANCH
    return DivergenceReport(
        position=position,
        prefix="".join(prefix),
        branches=branches,
        margin=margin,
        near_tie=margin < near_tie_margin,
        verdict=verdict,
        logprobs_mode=logprobs_mode,
        modal_answer=modal,
        disagreeing_samples=len(others),
        explained_samples=splits[prefix],
    )


def _branches(sharing: Sequence[SampleTrace], position: int) -> tuple[Branch, ...]:
    logprobs: dict[str, float] = {}
    taken: dict[str, Counter[str | None]] = defaultdict(Counter)
    for trace in sharing:
        steps = trace.steps or ()
        if position >= len(steps):
            taken[END_OF_TEXT][trace.answer_key] += 1
            continue
        step = steps[position]
        taken[step.token][trace.answer_key] += 1
        # Identical prefixes give one distribution; the first report of a token wins.
        for top in step.top_logprobs:
            logprobs.setdefault(top.token, top.logprob)
        logprobs.setdefault(step.token, step.logprob)
    tokens = sorted({*logprobs, *taken}, key=lambda t: -logprobs.get(t, -math.inf))
    return tuple(
        Branch(
            token=token,
            probability=math.exp(logprobs[token]) if token in logprobs else None,
            answers=tuple(taken[token].most_common()),
        )
        for token in tokens
    )
