"""Logprobs in vLLM's shapes: chat `content[]`, legacy completions arrays, `prompt_logprobs`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simulator.answer_trie import MIN_LOGPROB
from simulator.generation import TokenLogprob
from simulator.pseudo_model import CANDIDATES, PseudoModel
from simulator.tokenizer import Tokenizer


def _floor(logprob: float) -> float:
    return logprob if logprob > MIN_LOGPROB else MIN_LOGPROB


def _deduplicated(entry: TokenLogprob, limit: int) -> list[tuple[int, float]]:
    # The sampled token first, then the top candidates that are not it.
    ranked = [(entry.token_id, entry.logprob)]
    ranked.extend(item for item in entry.top if item[0] != entry.token_id)
    return ranked[:limit]


def chat_content(
    tokenizer: Tokenizer,
    entries: Sequence[TokenLogprob],
    top_logprobs: int,
    as_token_ids: bool,
) -> list[dict[str, Any]]:
    """`logprobs.content` for a run of tokens; top_logprobs has exactly k entries."""
    texts = tokenizer.logprob_texts
    raw = tokenizer.logprob_bytes
    content = []
    for entry in entries:
        top = []
        if top_logprobs:
            for token_id, logprob in _deduplicated(entry, top_logprobs):
                shown = f"token_id:{token_id}" if as_token_ids else texts[token_id]
                top.append(
                    {
                        "token": shown,
                        "logprob": _floor(logprob),
                        "bytes": list(shown.encode()) if as_token_ids else raw[token_id],
                    }
                )
        token_id = entry.token_id
        content.append(
            {
                "token": f"token_id:{token_id}" if as_token_ids else texts[token_id],
                "logprob": _floor(entry.logprob),
                "bytes": raw[token_id],
                "top_logprobs": top,
            }
        )
    return content


def completion_logprobs(
    tokenizer: Tokenizer,
    entries: Sequence[TokenLogprob],
    top_logprobs: int,
    text_offset: int,
    as_token_ids: bool,
    null_first: bool = False,
) -> dict[str, list[Any]]:
    """Legacy completions logprobs (up to k+1 per position); `null_first` for an echoed prompt."""
    texts = tokenizer.logprob_texts
    offsets: list[int] = []
    token_logprobs: list[float | None] = []
    tokens: list[str] = []
    tops: list[dict[str, float] | None] = []
    for position, entry in enumerate(entries):
        shown = f"token_id:{entry.token_id}" if as_token_ids else texts[entry.token_id]
        offsets.append(text_offset)
        text_offset += len(shown)
        tokens.append(shown)
        if null_first and position == 0:
            token_logprobs.append(None)
            tops.append(None)
            continue
        token_logprobs.append(_floor(entry.logprob))
        top: dict[str, float] = {}
        for token_id, logprob in _deduplicated(entry, top_logprobs + 1):
            key = f"token_id:{token_id}" if as_token_ids else texts[token_id]
            top[key] = _floor(logprob)
        tops.append(top)
    return {
        "text_offset": offsets,
        "token_logprobs": token_logprobs,
        "tokens": tokens,
        "top_logprobs": tops,
    }


def prompt_token_logprobs(
    model: PseudoModel, prompt_ids: Sequence[int], top: int
) -> list[tuple[TokenLogprob, int]]:
    """(entry, rank) of each prompt token given the ones before it; the first has no context."""
    if not prompt_ids:
        return []
    entries = [(TokenLogprob(prompt_ids[0], MIN_LOGPROB, []), 0)]
    state = model.prompt_key(())
    for position in range(1, len(prompt_ids)):
        state = model.advance(state, prompt_ids[position - 1])
        actual = prompt_ids[position]
        profile = model.profile(state)
        candidates = model.candidates(state, CANDIDATES)
        if actual in candidates:
            rank = candidates.index(actual) + 1
            logprob = profile.logprobs[rank - 1]
        else:
            logprob, rank = model.off_list_logprob(state, actual)
        ranked = [(t, profile.logprobs[r]) for r, t in enumerate(candidates[:top])]
        entries.append((TokenLogprob(actual, logprob, ranked), rank))
    return entries


def prompt_logprobs_body(
    tokenizer: Tokenizer, model: PseudoModel, prompt_ids: Sequence[int], top: int
) -> list[dict[str, dict[str, Any]] | None]:
    """vLLM's `prompt_logprobs`: per position {token id: {logprob, rank, decoded_token}}."""
    texts = tokenizer.logprob_texts
    body: list[dict[str, dict[str, Any]] | None] = []
    for position, (entry, rank) in enumerate(prompt_token_logprobs(model, prompt_ids, top)):
        if position == 0:
            body.append(None)
            continue
        item = {
            str(entry.token_id): {
                "logprob": _floor(entry.logprob),
                "rank": rank,
                "decoded_token": texts[entry.token_id],
            }
        }
        for r, (token_id, logprob) in enumerate(entry.top, start=1):
            item.setdefault(
                str(token_id),
                {"logprob": _floor(logprob), "rank": r, "decoded_token": texts[token_id]},
            )
        body.append(item)
    return body
