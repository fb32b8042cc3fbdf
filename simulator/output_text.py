"""Incremental detokenisation as vLLM does it: partial UTF-8 held back, stop strings cut."""

from __future__ import annotations

from simulator.tokenizer import Tokenizer


class OutputText:
    """Text of generated tokens; `ends[i]` is how much of it may be streamed after token i."""

    def __init__(self, tokenizer: Tokenizer, stop: tuple[str, ...], include_stop: bool) -> None:
        self._bytes = tokenizer.output_bytes
        self._stop = stop
        self._include_stop = include_stop
        self._longest_stop = max((len(s) for s in stop), default=0)
        # Without the stop string in the output, text that may begin one is held back.
        self._hold = 0 if include_stop else max(self._longest_stop - 1, 0)
        self._pending = b""
        self.text = ""
        self.ends: list[int] = []

    def add(self, token_id: int, check_stop: bool = True) -> str | None:
        """Append a token; returns the stop string it completed, if any."""
        data = self._bytes[token_id]
        before = len(self.text)
        if data:
            pending = self._pending + data
            decoded = pending.decode("utf-8", errors="replace")
            if decoded.endswith("\ufffd"):
                self._pending = pending
            else:
                self._pending = b""
                self.text += decoded
        if check_stop and self._stop and len(self.text) > before:
            matched = self._find_stop(before)
            if matched is not None:
                return matched
        visible = len(self.text) - self._hold
        last = self.ends[-1] if self.ends else 0
        self.ends.append(max(visible, last))
        return None

    def _find_stop(self, before: int) -> str | None:
        for stop in self._stop:
            index = self.text.find(stop, max(before - len(stop) + 1, 0))
            if index != -1:
                cut = index + len(stop) if self._include_stop else index
                self.text = self.text[:cut]
                self.ends.append(len(self.text))
                return stop
        return None

    def finish(self) -> None:
        """The last token has been added: everything kept so far becomes visible."""
        if self.ends:
            self.ends[-1] = len(self.text)
