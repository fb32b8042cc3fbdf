"""Produce one choice's tokens, logprobs, text and finish reason before the engine times it."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from simulator.answer_trie import AnswerTrie, TrieNode
from simulator.output_text import OutputText
from simulator.pseudo_model import CANDIDATES, PseudoModel
from simulator.sampling import SamplingSettings, cumulative_weights, draw
from simulator.tokenizer import Tokenizer

Ranked = list[tuple[int, float]]


@dataclass(slots=True)
class TokenLogprob:
    """The sampled token's logprob and the top candidates (rank order) at its position."""

    token_id: int
    logprob: float
    top: Ranked


@dataclass(slots=True)
class GeneratedOutput:
    """Everything a response needs about one choice, independent of timing."""

    token_ids: list[int]
    text: str
    text_ends: list[int]
    finish_reason: str
    stop_reason: str | int | None
    logprobs: list[TokenLogprob] | None
    # Logprobs already rendered for a response, by (start, end, k, as token ids): a reused
    # output (see generation_cache) renders them once.
    rendered: dict[tuple[int, int, int, bool], list[dict[str, Any]]] = field(default_factory=dict)


class PseudoSource:
    """Next tokens from the random-logit model, ending with EOS at a pseudo-random length."""

    def __init__(
        self,
        model: PseudoModel,
        state: int,
        settings: SamplingSettings,
        rng: random.Random,
        length: int,
    ) -> None:
        self._model = model
        self._state = state
        self._settings = settings
        self._rng = rng
        self._length = length
        self._position = 0
        self._after_lead = False
        self._tables: dict[int, list[float]] = {}

    def next(self, eos_allowed: bool, top: int) -> tuple[int, float, Ranked]:
        """(token, logprob, top candidates) for the next position."""
        model = self._model
        state = self._state
        count = max(top, 1)
        if self._after_lead:
            profile, candidates = model.forced, model.continuation_candidates(state, count)
            rank = 0
        elif eos_allowed and self._position >= self._length:
            profile, candidates = model.forced, model.eos_candidates(state, count)
            rank = 0
        else:
            profile = model.profile(state)
            table = self._tables.get(id(profile))
            if table is None:
                s = self._settings
                table = cumulative_weights(profile.probs, s.temperature, s.top_p, s.top_k)
                self._tables[id(profile)] = table
            rank = draw(table, self._rng)
            candidates = model.candidates(state, max(count, rank + 1))
        token = candidates[rank]
        self._after_lead = token == model.lead_byte
        self._state = model.advance(state, token)
        self._position += 1
        ranked = [(t, profile.logprobs[r]) for r, t in enumerate(candidates[:top])]
        return token, profile.logprobs[rank], ranked


class ScriptedSource:
    """Walks one answer's path in the trie; past its end (EOS suppressed) falls back to pseudo."""

    def __init__(self, trie: AnswerTrie, answer: int, fallback: PseudoSource) -> None:
        self._trie = trie
        self._steps: list[tuple[TrieNode, int]] = trie.path(answer)
        self._position = 0
        self._fallback = fallback
        self._eos = trie.answers[answer][-1]

    def next(self, eos_allowed: bool, top: int) -> tuple[int, float, Ranked]:
        """(token, logprob, top candidates) for the next position."""
        if self._position < len(self._steps):
            node, token = self._steps[self._position]
            if token != self._eos or eos_allowed:
                self._position += 1
                ranked = self._trie.ranked(node)
                return token, self._trie.logprob_of(node, token), ranked[:top]
            self._position = len(self._steps)
        return self._fallback.next(False, top)


def generate(
    tokenizer: Tokenizer,
    source: PseudoSource | ScriptedSource,
    settings: SamplingSettings,
) -> GeneratedOutput:
    """Run a source up to EOS, a stop string or token, or max_tokens."""
    text = OutputText(tokenizer, settings.stop, settings.include_stop_str_in_output)
    want_logprobs = settings.top_logprobs is not None
    top = min(settings.top_logprobs or 0, CANDIDATES)
    token_ids: list[int] = []
    logprobs: list[TokenLogprob] | None = [] if want_logprobs else None
    finish_reason = "length"
    stop_reason: str | int | None = None
    eos = tokenizer.eos_id
    for position in range(settings.max_tokens):
        eos_allowed = not settings.ignore_eos and position >= settings.min_tokens
        token, logprob, ranked = source.next(eos_allowed, top)
        token_ids.append(token)
        if logprobs is not None:
            logprobs.append(TokenLogprob(token, logprob, ranked))
        stop_string = text.add(token, check_stop=position + 1 > settings.min_tokens)
        if token == eos and eos_allowed:
            finish_reason = "stop"
            break
        if token in settings.stop_token_ids and position >= settings.min_tokens:
            finish_reason, stop_reason = "stop", token
            break
        if stop_string is not None:
            finish_reason, stop_reason = "stop", stop_string
            break
    text.finish()
    return GeneratedOutput(token_ids, text.text, text.ends, finish_reason, stop_reason, logprobs)
