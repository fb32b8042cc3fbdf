"""Compare chat top_logprobs lists up to exactly tied alternatives.

The tiny model runs in bfloat16, so distinct tokens often have exactly the same logprob, and
vLLM's top-k orders tied tokens differently for different k. When the gateway asks vLLM for 5
alternatives and trims them to the client's 2, a tied alternative may be a different token from
the one a direct top-2 call names: same logprob, equally correct, not the same bytes.
"""

from __future__ import annotations

from typing import Any


def _is_alternatives(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) and "token" in v for v in value)


def _tied(alternatives: list[dict[str, Any]], at: int) -> bool:
    """Whether alternative `at` (after the sampled token) could be another token of its logprob:
    its value recurs in the list, or it is the last one and may tie with one left out."""
    value = alternatives[at]["logprob"]
    values = [alt["logprob"] for alt in alternatives]
    return values.count(value) > 1 or at == len(alternatives) - 1


def _align_alternatives(
    direct: list[dict[str, Any]], via: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    if len(direct) != len(via):
        return via
    aligned = [via[0]] if via else []
    for at in range(1, len(via)):
        same_value = via[at]["logprob"] == direct[at]["logprob"]
        aligned.append(direct[at] if same_value and _tied(direct, at) else via[at])
    return aligned


def align_tied(direct: Any, via: Any) -> Any:
    """`via` with each tied alternative replaced by `direct`'s at the same place and logprob."""
    if isinstance(direct, dict) and isinstance(via, dict):
        out = {}
        for key, value in via.items():
            if key in direct and key == "top_logprobs" and _is_alternatives(value):
                if _is_alternatives(direct[key]):
                    out[key] = _align_alternatives(direct[key], value)
                    continue
            out[key] = align_tied(direct[key], value) if key in direct else value
        return out
    if isinstance(direct, list) and isinstance(via, list) and len(direct) == len(via):
        return [align_tied(d, v) for d, v in zip(direct, via, strict=True)]
    return via
