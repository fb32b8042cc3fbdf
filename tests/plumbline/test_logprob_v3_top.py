"""The compiled v3 top-k columns are numpy's, bit for bit, and refuse what does not fit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plumbline import logprob_v3
from plumbline._logprob_scan import top_columns as compiled


@st.composite
def positions(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Positions whose sampled token is among its alternatives sometimes, anywhere, or twice."""
    n, k = draw(st.integers(0, 30)), draw(st.integers(1, 8))
    ids = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), np.int64)
    values = st.one_of(
        st.floats(-1e6, 0.0, allow_nan=False),
        st.sampled_from([-0.0, 0.0, -0.001, -0.003, -0.005, -1e6, -2.5e-3]),
    )
    lps = np.array(draw(st.lists(values, min_size=n, max_size=n)), np.float64)
    alt_ids = np.array(draw(st.lists(st.integers(0, 6), min_size=n * k, max_size=n * k)))
    alt_lps = np.array(draw(st.lists(values, min_size=n * k, max_size=n * k)), np.float64)
    alt_ids, alt_lps = alt_ids.astype(np.int64).reshape(n, k), alt_lps.reshape(n, k)
    for row in range(n):
        if draw(st.booleans()):  # the sampled token listed, as vLLM lists it
            at = draw(st.integers(0, k - 1))
            alt_ids[row, at], alt_lps[row, at] = ids[row], lps[row]
    return ids, lps, alt_ids, alt_lps


@settings(max_examples=500, deadline=None)
@given(positions())
def test_compiled_columns_are_the_references(
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    found = logprob_v3.top_columns(*arrays)
    expected = logprob_v3.top_columns_reference(*arrays)
    for left, right in zip(found, expected, strict=True):
        assert left.tolist() == right.tolist()


def test_bad_arguments_are_refused() -> None:
    ids, lps = np.zeros(2, np.int64), np.zeros(2)
    alt_ids, alt_lps = np.zeros((2, 3), np.int64), np.zeros((2, 3))
    with pytest.raises(ValueError, match="wrong size"):
        compiled(ids, lps, alt_ids[:1], alt_lps, 3, logprob_v3.STEP)
    with pytest.raises(ValueError, match="k <"):
        compiled(ids, lps, alt_ids, alt_lps, 0, logprob_v3.STEP)
    with pytest.raises(ValueError, match="int64"):
        compiled(b"abc", lps, alt_ids, alt_lps, 3, logprob_v3.STEP)
