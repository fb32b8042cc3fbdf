"""Token trie of scripted answers; its nodes give the logprobs the model reports along a path."""

from __future__ import annotations

import math
from collections.abc import Sequence

from simulator.sampling import mix64

MIN_LOGPROB = -9999.0
_FILLER_COUNT = 20
_TAIL_MASS = 1e-6


def safe_log(p: float) -> float:
    """ln p, floored like vLLM's logprobs."""
    return math.log(p) if p > 0 else MIN_LOGPROB


class TrieNode:
    """A position in the answers; `children` maps the next token to its subtree."""

    __slots__ = ("_ranked", "children", "mass", "serial")

    def __init__(self, serial: int) -> None:
        self.serial = serial
        self.mass = 0.0
        self.children: dict[int, TrieNode] = {}
        self._ranked: list[tuple[int, float]] | None = None


class AnswerTrie:
    """Answers (token ids ending with EOS) weighted by their normalised probabilities.

    A child's reported logprob is ln of the share of all answer mass below it when the node
    branches, so at the first divergent token the alternatives show their answers' shares;
    on single-path positions the next token gets `path_probability`. Filler tokens, below
    every child, fill the remaining top-k slots.
    """

    def __init__(
        self,
        answers: Sequence[Sequence[int]],
        weights: Sequence[float],
        *,
        path_probability: float,
        filler_pool: Sequence[int],
        salt: int = 0,
    ) -> None:
        total = sum(weights)
        self.weights = [w / total for w in weights]
        self.answers = [tuple(a) for a in answers]
        self._path_probability = path_probability
        self._pool = filler_pool
        self._salt = salt
        self._serial = 0
        self.root = self._new_node()
        for tokens, weight in zip(self.answers, self.weights, strict=True):
            node = self.root
            node.mass += weight
            for token in tokens:
                child = node.children.get(token)
                if child is None:
                    child = node.children[token] = self._new_node()
                child.mass += weight
                node = child

    def _new_node(self) -> TrieNode:
        self._serial += 1
        return TrieNode(self._serial)

    def path(self, answer_index: int) -> list[tuple[TrieNode, int]]:
        """(node, token chosen there) for each token of one answer."""
        steps = []
        node = self.root
        for token in self.answers[answer_index]:
            steps.append((node, token))
            node = node.children[token]
        return steps

    def ranked(self, node: TrieNode) -> list[tuple[int, float]]:
        """The node's next-token candidates with logprobs, most likely first."""
        if node._ranked is None:
            node._ranked = self._rank(node)
        return node._ranked

    def logprob_of(self, node: TrieNode, token: int) -> float:
        """Reported logprob of `token` at `node`."""
        for candidate, logprob in self.ranked(node):
            if candidate == token:
                return logprob
        return MIN_LOGPROB

    def _rank(self, node: TrieNode) -> list[tuple[int, float]]:
        children = sorted(node.children.items(), key=lambda item: -item[1].mass)
        if len(children) == 1:
            probs = [self._path_probability]
        else:
            probs = [child.mass for _, child in children]
        ranked = [(token, safe_log(p)) for (token, _), p in zip(children, probs, strict=True)]
        remaining = max(1.0 - sum(probs), _TAIL_MASS)
        ceiling = min(probs)
        taken = set(node.children)
        start = mix64(node.serial ^ (self._salt << 20))
        size = len(self._pool)
        share = 0.5
        offset = 0
        while len(ranked) < len(children) + _FILLER_COUNT and offset < size:
            token = self._pool[(start + offset * 7919) % size]
            offset += 1
            if token in taken:
                continue
            taken.add(token)
            ranked.append((token, safe_log(min(remaining, ceiling) * share)))
            share *= 0.5
        return ranked
