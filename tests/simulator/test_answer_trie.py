"""Scripted answers: the trie reports answer shares at divergent tokens, a high p elsewhere."""

from __future__ import annotations

import math

from simulator.answer_trie import AnswerTrie
from simulator.pseudo_model import PseudoModel
from simulator.tokenizer import Tokenizer

ANSWERS = [
    ("The indemnity cap is 12 months of fees.", 0.46),
    ("The indemnity cap is 24 months of fees.", 0.41),
    ("There is no cap.", 0.13),
]


def _trie(tokenizer: Tokenizer) -> AnswerTrie:
    answers = [[*tokenizer.encode(text), tokenizer.eos_id] for text, _ in ANSWERS]
    return AnswerTrie(
        answers,
        [p for _, p in ANSWERS],
        path_probability=0.97,
        filler_pool=PseudoModel(tokenizer).pool,
    )


def test_divergent_token_shows_each_answers_share() -> None:
    tokenizer = Tokenizer()
    trie = _trie(tokenizer)
    path = trie.path(0)
    twelve, twenty_four = tokenizer.encode(" 12")[0], tokenizer.encode(" 24")[0]
    node = next(node for node, token in path if token == twelve)
    ranked = dict(trie.ranked(node))
    assert math.isclose(ranked[twelve], math.log(0.46))
    assert math.isclose(ranked[twenty_four], math.log(0.41))
    first = trie.ranked(trie.root)
    assert math.isclose(first[0][1], math.log(0.87))
    assert math.isclose(first[1][1], math.log(0.13))


def test_single_path_tokens_get_the_path_probability_and_end_with_eos() -> None:
    tokenizer = Tokenizer()
    trie = _trie(tokenizer)
    path = trie.path(2)
    assert path[-1][1] == tokenizer.eos_id
    for node, token in path[1:]:
        assert math.isclose(trie.logprob_of(node, token), math.log(0.97))


def test_fillers_are_distinct_and_less_likely_than_every_child() -> None:
    tokenizer = Tokenizer()
    trie = _trie(tokenizer)
    for node, _ in trie.path(0):
        ranked = trie.ranked(node)
        tokens = [token for token, _ in ranked]
        assert len(tokens) == len(set(tokens)) >= 20
        children = len(node.children)
        weakest_child = min(lp for _, lp in ranked[:children])
        assert all(lp < weakest_child for _, lp in ranked[children:])
        assert [lp for _, lp in ranked] == sorted((lp for _, lp in ranked), reverse=True)


def test_weights_are_normalised() -> None:
    tokenizer = Tokenizer()
    trie = AnswerTrie(
        [[5, tokenizer.eos_id], [6, tokenizer.eos_id]],
        [3.0, 1.0],
        path_probability=0.9,
        filler_pool=PseudoModel(tokenizer).pool,
    )
    assert trie.weights == [0.75, 0.25]
    assert math.isclose(dict(trie.ranked(trie.root))[5], math.log(0.75))
