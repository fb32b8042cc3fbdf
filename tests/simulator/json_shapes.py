"""Compare JSON documents by structure: same keys in the same order, same nesting, same types."""

from __future__ import annotations

from typing import Any

# Objects keyed by token text or token id: compare their values, not their keys.
TOKEN_MAPS = ("top_logprobs[]", "prompt_logprobs[]")


def _is_token_map(path: str) -> bool:
    # Chat (`content[]`) and Responses (`logprobs[]`) list their alternatives as objects.
    return path.endswith(TOKEN_MAPS) and "content[]" not in path and "logprobs[]." not in path


def mismatches(ours: Any, theirs: Any, path: str = "$") -> list[str]:
    """Every place where `ours` differs in shape from `theirs` (empty when compatible)."""
    problems: list[str] = []
    if isinstance(theirs, dict):
        if not isinstance(ours, dict):
            return [f"{path}: expected object, got {type(ours).__name__}"]
        if _is_token_map(path):
            sample = next(iter(theirs.values()), None)
            for key, value in ours.items():
                problems += mismatches(value, sample, f"{path}.<{key}>") if sample else []
            return problems
        if list(ours) != list(theirs):
            return [f"{path}: keys {list(ours)} != {list(theirs)}"]
        for key in theirs:
            problems += mismatches(ours[key], theirs[key], f"{path}.{key}")
        return problems
    if isinstance(theirs, list):
        if not isinstance(ours, list):
            return [f"{path}: expected list, got {type(ours).__name__}"]
        if not theirs or not ours:
            return []
        for item in ours:
            options: list[list[str]] = [
                mismatches(item, candidate, f"{path}[]") for candidate in theirs
            ]
            if all(options):
                problems += sorted(options, key=lambda found: len(found))[0]
        return problems
    if theirs is None:
        return [] if ours is None else [f"{path}: expected null, got {ours!r}"]
    if type(ours) is not type(theirs):
        return [f"{path}: expected {type(theirs).__name__}, got {type(ours).__name__}"]
    return []


def assert_same_shape(ours: Any, theirs: Any) -> None:
    """Fail with every shape difference listed."""
    problems = mismatches(ours, theirs)
    assert not problems, "\n".join(problems[:20])
