"""A deterministic byte-level tokenizer: GPT-2 style token strings, greedy longest match."""

from __future__ import annotations

import re

from simulator.vocabulary import (
    SPECIAL_TOKENS,
    byte_tokens_in_id_order,
    gpt2_byte_to_unicode,
    merged_tokens,
)

_SPECIAL_SPLIT = re.compile(r"(<s>|</s>)")
_PRETOKEN = re.compile(
    r"'(?:s|t|re|ve|m|ll|d)| ?[A-Za-z]+| ?[0-9]{1,3}| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+"
)
_PIECE_CACHE_LIMIT = 200_000


class Tokenizer:
    """Vocabulary: <s>, </s>, <unk>, the 256 bytes, then words, pieces and numbers 0-999."""

    bos_id = 0
    eos_id = 1

    def __init__(self) -> None:
        byte_map = gpt2_byte_to_unicode()
        self.special_ids = {text: i for i, text in enumerate(SPECIAL_TOKENS)}
        raw: list[bytes] = [b""] * len(SPECIAL_TOKENS)
        raw.extend(bytes([b]) for b in byte_tokens_in_id_order())
        raw.extend(token.encode("utf-8") for token in merged_tokens())
        self.output_bytes: list[bytes] = raw
        self.vocab_size = len(raw)
        self._ids: dict[bytes, int] = {}
        for token_id, data in enumerate(raw):
            if token_id >= len(SPECIAL_TOKENS):
                self._ids[data] = token_id
        self._max_len = max(len(data) for data in raw)
        self.byte_ids: dict[int, int] = {
            data[0]: i for data, i in self._ids.items() if len(data) == 1
        }
        self.token_strs: list[str] = list(SPECIAL_TOKENS) + [
            "".join(byte_map[b] for b in data) for data in raw[len(SPECIAL_TOKENS) :]
        ]
        # What a logprob entry shows for a token decoded on its own: partial UTF-8 is "".
        self.logprob_texts: list[str] = list(SPECIAL_TOKENS) + [
            _decoded_alone(data) for data in raw[len(SPECIAL_TOKENS) :]
        ]
        self.logprob_bytes: list[list[int]] = [list(t.encode("utf-8")) for t in self.logprob_texts]
        self._piece_cache: dict[str, tuple[int, ...]] = {}

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`; `<s>` and `</s>` in the text become the special tokens."""
        ids: list[int] = []
        for part in _SPECIAL_SPLIT.split(text):
            if not part:
                continue
            special = self.special_ids.get(part)
            if special is not None:
                ids.append(special)
                continue
            for piece in _PRETOKEN.findall(part):
                ids.extend(self._encode_piece(piece))
        return ids

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        cached = self._piece_cache.get(piece)
        if cached is not None:
            return cached
        data = piece.encode("utf-8")
        whole = self._ids.get(data)
        if whole is not None:
            result: tuple[int, ...] = (whole,)
        else:
            out: list[int] = []
            start = 0
            while start < len(data):
                for length in range(min(self._max_len, len(data) - start), 0, -1):
                    token_id = self._ids.get(data[start : start + length])
                    if token_id is not None:
                        out.append(token_id)
                        start += length
                        break
            result = tuple(out)
        if len(self._piece_cache) >= _PIECE_CACHE_LIMIT:
            self._piece_cache.clear()
        self._piece_cache[piece] = result
        return result

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        """Text of `ids`; invalid UTF-8 becomes U+FFFD."""
        parts: list[bytes] = []
        for token_id in ids:
            if token_id < len(SPECIAL_TOKENS):
                if not skip_special_tokens:
                    parts.append(SPECIAL_TOKENS[token_id].encode("utf-8"))
            else:
                parts.append(self.output_bytes[token_id])
        return b"".join(parts).decode("utf-8", errors="replace")

    def is_special(self, token_id: int) -> bool:
        """Whether the id is one of <s>, </s>, <unk>."""
        return token_id < len(SPECIAL_TOKENS)


def _decoded_alone(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return ""
