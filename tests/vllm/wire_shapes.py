"""Compare two servers' responses by structure: keys in order, nesting and types, not values.

Two servers running different models agree on shapes when they speak the same protocol. Both
directions are checked, so a key or a null that only one side has is a difference; an empty
list fits any list. A stream is compared per choice (chunks of n > 1 choices interleave in no
fixed order): its first and last chunks, and every chunk against the other side's chunks.
"""

from __future__ import annotations

from typing import Any

from tests.simulator.json_shapes import mismatches


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


def stream_differences(ours: list[Any], theirs: list[Any]) -> list[str]:
    """Shape differences between two event streams (parsed `data:` payloads)."""
    our_choices, our_others = _group(ours)
    their_choices, their_others = _group(theirs)
    if sorted(our_choices) != sorted(their_choices):
        return [f"choices {sorted(our_choices)} != {sorted(their_choices)}"]
    found = []
    for index, chunks in their_choices.items():
        mine = our_choices[index]
        found += differences(mine[0], chunks[0], f"choice {index} first chunk")
        found += differences(mine[-1], chunks[-1], f"choice {index} last chunk")
        found += differences(mine, chunks, f"choice {index} chunks")
    if len(our_others) != len(their_others):
        return [*found, f"events without choices: {our_others} != {their_others}"]
    for at, (mine, their) in enumerate(zip(our_others, their_others, strict=True)):
        found += differences(mine, their, f"event without choices #{at}")
    return found
