"""A chat record's logprobs in the v3 form: scanned from the bytes, ids from the vocabulary.

Nothing is parsed into Python objects: `plumbline.logprob_scan` reads vLLM's layout into
columns, the vocabulary turns keys into ids, `plumbline.logprob_v3` packs them. Where that
cannot be done the record is stored as v2 and the reason counted: a layout other than vLLM's,
a secret in the sampled text (v2's masking path handles it, so no secret becomes a vocabulary
key), a vocabulary bound, the database away.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from operator import itemgetter

import numpy as np
import orjson
import zstandard

from gateway.metering.logprob_summary import LogprobSummary, summarize_arrays
from gateway.recording.logprob_vocab import Fallback, Vocabulary
from gateway.recording.sink_stats import SinkStats
from gateway.recording.stored_text import RedactionPolicy
from plumbline import logprob_v3
from plumbline.logprob_scan import ScannedChat, scan_chat

LEVEL = 3  # zstd level of the compressed planes: small sections, level 3 costs little over 1
# An integer logprob (`0`, `-3`): a JSON reader gives an int, v3 would give back a float.
_INTEGER_LOGPROB = re.compile(rb'"logprob":-?[0-9]+[,}]')


@dataclass(frozen=True, slots=True)
class V3Logprobs:
    """The two column values, the summary's figures and the logged tokens of one record."""

    payload: bytes
    topk: bytes | None
    token_count: int
    summary: LogprobSummary


def _choices(chunks: list[tuple[int, bytes]]) -> dict[int, list[bytes]]:
    indices = set(map(itemgetter(0), chunks))
    if len(indices) == 1:  # one choice (n=1, nearly every call): no loop in Python
        return {indices.pop(): list(map(itemgetter(1), chunks))}
    joined: dict[int, list[bytes]] = {}
    for index, items in chunks:
        joined.setdefault(index, []).append(items)
    return dict(sorted(joined.items()))


def sampled_text(scanned: ScannedChat) -> str:
    """A choice's sampled tokens as one text, read from the keys."""
    # Each key holds one NUL: joined with NULs, every other part is a token's JSON content.
    tokens = b"\x00".join(scanned.keys).split(b"\x00")[::2]
    if b"\\" not in b"".join(tokens):
        return b"".join(tokens).decode()  # nothing escaped: the content is the UTF-8 text
    return "".join(orjson.loads(b'["' + b'","'.join(tokens) + b'"]'))


def _exact_as_read(scanned: ScannedChat, items: list[bytes]) -> bool:
    """False where a sampled logprob is written as an integer (only whole values can be)."""
    values = scanned.logprobs
    if not np.any(values == np.round(values)):
        return True
    return _INTEGER_LOGPROB.search(b",".join(items)) is None


class V3Rows:
    """Builds v3 values, one zstd compressor per thread, counting each fallback in `stats`."""

    def __init__(self, vocabulary: Vocabulary, stats: SinkStats) -> None:
        self.vocabulary = vocabulary
        self.stats = stats
        self._local = threading.local()
        self._count_lock = threading.Lock()

    def _zstd(self) -> zstandard.ZstdCompressor:
        zstd: zstandard.ZstdCompressor | None = getattr(self._local, "zstd", None)
        if zstd is None:
            zstd = self._local.zstd = zstandard.ZstdCompressor(level=LEVEL)
        return zstd

    def fell_back(self, reason: str) -> None:
        """Count a record stored as v2 instead."""
        name = f"logprob_v3_fallback_{reason}"
        with self._count_lock:
            setattr(self.stats, name, getattr(self.stats, name) + 1)

    def build(
        self, chunks: list[tuple[int, bytes]], policy: RedactionPolicy | None
    ) -> V3Logprobs | None:
        """A chat record's v3 values, or None (counted) where it is to be stored as v2."""
        try:
            return self._build(chunks, policy)
        except Fallback as fallback:
            self.fell_back(fallback.reason)
            return None

    def _build(self, chunks: list[tuple[int, bytes]], policy: RedactionPolicy | None) -> V3Logprobs:
        per_choice = _choices(chunks)
        scanned: dict[int, ScannedChat] = {}
        for index, items in per_choice.items():
            found = scan_chat(items)
            if found is None or not _exact_as_read(found, items):
                raise Fallback("layout")
            scanned[index] = found
        redactor = policy.redactor if policy is not None and policy.mask_logprobs else None
        if redactor is not None:
            for found in scanned.values():
                try:
                    text = sampled_text(found)
                except ValueError:  # not UTF-8, or an escape JSON does not allow
                    raise Fallback("layout") from None
                if redactor.spans(text):
                    raise Fallback("redacted")
        keys: list[bytes] = []
        for found in scanned.values():
            keys += found.keys
            keys += found.alt_keys
        ids = self.vocabulary.ids(keys)
        choices, at = [], 0
        for index, found in scanned.items():
            n, m = len(found.keys), len(found.alt_keys)
            choice = logprob_v3.ChoiceIds(
                index,
                ids[at : at + n],
                found.logprobs,
                found.alt_counts,
                ids[at + n : at + n + m],
                found.alt_logprobs,
            )
            if not logprob_v3.fits(choice):
                raise Fallback("layout")
            choices.append(choice)
            at += n + m
        if len({int(c.alt_counts[0]) for c in choices}) != 1:
            raise Fallback("layout")  # choices with different k: one top-k matrix needs one
        payload, topk = logprob_v3.pack(choices, self._zstd())
        positions = sum(len(found.keys) for found in scanned.values())
        return V3Logprobs(payload, topk, positions, summary_of(choices))


def summary_of(choices: list[logprob_v3.ChoiceIds]) -> LogprobSummary:
    """The calls row's summary from the exact values (before quantising), as v2 computes it."""
    sampled = np.concatenate([c.logprobs for c in choices])
    k = int(choices[0].alt_counts[0])
    top = np.concatenate([c.alt_logprobs for c in choices]).reshape(sampled.size, k)
    with np.errstate(all="ignore"):
        return summarize_arrays(sampled, top)
