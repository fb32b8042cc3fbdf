"""Compare two servers' responses by structure: keys in order, nesting and types, not values.

Two servers running different models agree on shapes when they speak the same protocol. Both
directions are checked, so a key or a null that only one side has is a difference; an empty
list fits any list. A stream is compared per choice (chunks of n > 1 choices interleave in no
fixed order): its first and last chunks, and each unfinished chunk against the other side's.
"""

from __future__ import annotations

from typing import Any

from tests.simulator.json_shapes import mismatches
from tests.vllm.stream_folding import fold_stream, sorted_keys


def differences(ours: Any, theirs: Any, where: str = "$") -> list[str]:
    """Shape differences between two JSON values, in either direction."""
    found = mismatches(ours, theirs, where)
    found += [f"{problem} (the other way round)" for problem in mismatches(theirs, ours, where)]
    return found


def _group(events: list[Any]) -> tuple[dict[int, list[Any]], list[Any]]:
    per_choice: dict[int, list[Any]] = {}
    others: list[Any] = []
    for event in events:
        choices = event.get("choices") if isinstance(event, dict) else None
        if choices:
            per_choice.setdefault(choices[0]["index"], []).append(event)
        else:
            others.append(event)
    return per_choice, others


def _finishes(chunk: dict[str, Any]) -> bool:
    return any(choice.get("finish_reason") is not None for choice in chunk["choices"])


def stream_differences(ours: list[Any], theirs: list[Any]) -> list[str]:
    """Shape differences between two event streams (parsed `data:` payloads).

    Each choice's chunks folded into one must agree (see stream_folding: vLLM may cut a stream
    into fewer chunks); where both sides cut a choice into several chunks, so must the first and
    last chunks, key order included, and each unfinished chunk with one of the other side's.
    """
    our_choices, our_others = _group(ours)
    their_choices, their_others = _group(theirs)
    if sorted(our_choices) != sorted(their_choices):
        return [f"choices {sorted(our_choices)} != {sorted(their_choices)}"]
    our_folds, their_folds = fold_stream(ours), fold_stream(theirs)
    found = []
    for index, chunks in their_choices.items():
        mine = our_choices[index]
        found += differences(
            sorted_keys(our_folds[str(index)]),
            sorted_keys(their_folds[str(index)]),
            f"choice {index} folded",
        )
        if len(mine) < 2 or len(chunks) < 2:
            continue
        if _finishes(mine[0]) == _finishes(chunks[0]):
            found += differences(mine[0], chunks[0], f"choice {index} first chunk")
        found += differences(mine[-1], chunks[-1], f"choice {index} last chunk")
        # The first chunks were compared above (the role chunk has keys no other chunk has);
        # a side whose API server lagged may have folded every middle chunk into the last.
        my_going = [chunk for chunk in mine[1:] if not _finishes(chunk)]
        their_going = [chunk for chunk in chunks[1:] if not _finishes(chunk)]
        if my_going and their_going:
            found += differences(my_going, their_going, f"choice {index} unfinished chunks")
    if len(our_others) != len(their_others):
        return [*found, f"events without choices: {our_others} != {their_others}"]
    for at, (mine, their) in enumerate(zip(our_others, their_others, strict=True)):
        found += differences(mine, their, f"event without choices #{at}")
    return found
