"""The stream comparison the differential tests use: folding-tolerant, but not blind."""

from __future__ import annotations

from typing import Any

from tests.vllm.wire_shapes import stream_differences

ROLE: dict[str, Any] = {
    "id": "x",
    "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}],
    "prompt_token_ids": None,
}


def _content(text: str, finish: str | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
    return {"id": "x", "choices": [choice]}


def test_a_stream_whose_middle_chunks_were_folded_into_the_last_compares_equal() -> None:
    cut = [ROLE, _content("a"), _content("b"), _content("", "stop")]
    folded = [ROLE, _content("ab", "stop")]
    assert stream_differences(cut, folded) == []
    assert stream_differences(folded, cut) == []


def test_a_middle_chunk_with_a_key_the_other_side_lacks_is_found() -> None:
    odd = _content("a") | {"usage": None}
    found = stream_differences(
        [ROLE, odd, _content("", "stop")], [ROLE, _content("a"), _content("", "stop")]
    )
    assert any("unfinished chunks" in problem for problem in found), found


def test_a_role_chunk_without_the_prompt_keys_is_found() -> None:
    bare = {"id": "x", "choices": ROLE["choices"]}
    found = stream_differences(
        [bare, _content("a"), _content("", "stop")], [ROLE, _content("a"), _content("", "stop")]
    )
    assert any("first chunk" in problem for problem in found), found
