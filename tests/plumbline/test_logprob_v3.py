"""The v3 form reads back as v1 does: tokens, bytes and sampled logprobs exactly, top-k in 0.001."""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pytest
import zstandard

from bench.recording.realistic import RealisticLogprobs
from plumbline import logprob_read, logprob_v3
from plumbline.logprob_scan import scan_chat
from tests.support.logprob_match import chat_entries_match


class _Ids:
    """Ids in order of first sight, as the vocabulary table gives them out."""

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}

    def of(self, keys: list[bytes]) -> np.ndarray:
        return np.array([self.ids.setdefault(k, len(self.ids) + 1) for k in keys], np.int64)

    def keys(self) -> dict[int, bytes]:
        return {i: k for k, i in self.ids.items()}


def _pack(choices: dict[int, list[dict[str, Any]]], ids: _Ids) -> tuple[bytes, bytes | None]:
    packed = []
    for index, entries in choices.items():
        scanned = scan_chat([orjson.dumps(entries)[1:-1]])
        assert scanned is not None
        choice = logprob_v3.ChoiceIds(
            index,
            ids.of(scanned.keys),
            scanned.logprobs,
            scanned.alt_counts,
            ids.of(scanned.alt_keys),
            scanned.alt_logprobs,
        )
        assert logprob_v3.fits(choice)
        packed.append(choice)
    return logprob_v3.pack(packed, zstandard.ZstdCompressor(level=3))


def _entry(token: str, value: float, alternatives: list[tuple[str, float]], raw: Any = None):
    return {
        "token": token,
        "logprob": value,
        "bytes": list(token.encode()) if raw is None else raw,
        "top_logprobs": [
            {"token": t, "logprob": v, "bytes": list(t.encode())} for t, v in alternatives
        ],
    }


def test_realistic_answers_read_back_as_sent() -> None:
    source, ids = RealisticLogprobs(seed=3), _Ids()
    for _ in range(6):
        entries = [orjson.loads(item) for item in source.answer(200, 5)]
        payload, topk = _pack({0: entries}, ids)
        stored = logprob_read.decode(payload, topk, ids.keys())
        assert set(stored) == {0} and chat_entries_match(stored[0], entries)
        assert len(payload) + len(topk or b"") < 24 * 200  # the bound, before the row


def test_odd_but_valid_values_and_tokens_read_back_exactly() -> None:
    entries = [
        # The sampled token is not among the alternatives; an escaped quote and a byte token.
        _entry('say "hi"', -7.25, [("a", -0.01), ("b", -0.02)]),
        # Not float32-exact: the choice's sampled values are stored as float64.
        _entry("\u00e9t\u00e9", -0.1, [("\u00e9t\u00e9", -0.1), ("x", -9999.0)]),
        _entry("bytes:\\xe2", -0.5, [("bytes:\\xe2", -0.5), ("y", -130.0)], raw=[226]),
        _entry("n", -0.0, [("m", 3.0), ("n", -0.0)], raw=None),
    ]
    entries[3]["bytes"] = None  # vLLM writes null where a token has no bytes
    other = [_entry(" second", -1.5, [(" second", -1.5), (" third", -2.0)])]
    ids = _Ids()
    payload, topk = _pack({0: entries, 2: other}, ids)
    stored = logprob_read.decode(payload, topk, ids.keys())
    assert stored[0][0]["token"] == 'say "hi"' and stored[0][3]["bytes"] is None
    assert chat_entries_match(stored[0], entries) and chat_entries_match(stored[2], other)
    assert stored[0][1]["logprob"] == -0.1  # exact, float64
    assert stored[0][1]["top_logprobs"][1]["logprob"] == -9999.0


def test_without_top_k_only_sampled_values_are_stored() -> None:
    entries = [_entry(" a", -0.25, []), _entry(" b", -1.0, [])]
    ids = _Ids()
    payload, topk = _pack({0: entries}, ids)
    assert topk is None and not logprob_read.topk_expired(payload, None)
    assert logprob_read.decode(payload, None, ids.keys()) == {0: entries}


def test_dropped_top_k_reads_as_empty_lists_and_says_so() -> None:
    entries = [_entry(" a", -0.25, [(" a", -0.25), (" b", -2.0)])]
    ids = _Ids()
    payload, topk = _pack({0: entries}, ids)
    assert logprob_read.topk_expired(payload, None) and not logprob_read.topk_expired(payload, topk)
    assert logprob_read.decode(payload, None, ids.keys()) == {
        0: [{**entries[0], "top_logprobs": []}]
    }


def test_values_off_the_grid_or_uneven_lists_do_not_fit() -> None:
    def choice(alt_lps: list[float], counts: list[int]) -> logprob_v3.ChoiceIds:
        n = len(counts)
        return logprob_v3.ChoiceIds(
            0,
            np.ones(n, np.int64),
            np.zeros(n),
            np.array(counts),
            np.ones(len(alt_lps), np.int64),
            np.array(alt_lps),
        )

    assert logprob_v3.fits(choice([-1.0, -2.0], [1, 1]))
    assert not logprob_v3.fits(choice([-1.0, -2e7], [1, 1]))
    assert not logprob_v3.fits(choice([-1.0, -2.0, -3.0], [1, 2]))


def test_corrupt_or_foreign_payloads_are_refused() -> None:
    ids = _Ids()
    payload, topk = _pack({0: [_entry(" a", -0.25, [(" a", -0.25), (" b", -2.0)])]}, ids)
    assert topk is not None
    with pytest.raises(ValueError, match="vocabulary keys"):
        logprob_read.decode(payload, None)  # v3 needs its keys
    with pytest.raises(ValueError, match="corrupt"):
        logprob_read.decode(payload[:-3] + b"xyz", topk, ids.keys())
    with pytest.raises(ValueError, match="corrupt"):
        logprob_read.decode(payload, topk[:20], ids.keys())
    with pytest.raises(ValueError, match="no usable key"):
        logprob_read.decode(payload, topk, {})  # ids no vocabulary row has
